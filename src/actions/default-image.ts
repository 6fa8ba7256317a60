/**
 * The image an Action's token gets when the user names none, and the Action's icon: drawn once
 * and encoded with fast-png, so no binary lives in the repository. A coin: a teal disc with a
 * lighter ring on a dark square, plain enough for any wallet to decode.
 */
import { encode } from "fast-png";

const SIZE = 256;

function draw(): Uint8Array {
  const px = new Uint8Array(SIZE * SIZE * 3);
  const c = SIZE / 2;
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const d = Math.hypot(x + 0.5 - c, y + 0.5 - c);
      const [r, g, b] = d < 84 ? [20, 184, 166] : d < 104 ? [153, 246, 228] : [15, 23, 42];
      const i = (y * SIZE + x) * 3;
      px[i] = r;
      px[i + 1] = g;
      px[i + 2] = b;
    }
  }
  return encode({ width: SIZE, height: SIZE, data: px, channels: 3, depth: 8 });
}

let png: Uint8Array | null = null;

/** The default image's PNG bytes (drawn on first use). */
export function defaultImagePng(): Uint8Array {
  return png ??= draw();
}

/** Its base64, as POST /v1/metadata's `imageBase64` takes it. */
export function defaultImageBase64(): string {
  let s = "";
  for (const b of defaultImagePng()) s += String.fromCharCode(b);
  return btoa(s);
}
