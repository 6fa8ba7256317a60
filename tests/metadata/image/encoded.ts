/**
 * Real images made by library encoders (fast-png, jpeg-js, libwebp through @jsquash/webp), beside
 * the hand-built ones in fixtures.ts: what an integrator's tools produce, compressed, with noise
 * in the pixels so no encoder shortcut makes them trivial.
 */
import { encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import encodeWebp, { init as initWebpEncoder } from "@jsquash/webp/encode.js";

/**
 * A gradient with deterministic noise on it, so every encoder has real work to do; without the
 * noise, large images still fit the 1 MiB upload limit.
 */
export function pixels(width: number, height: number, channels = 4, noise = true): Uint8Array {
  const out = new Uint8Array(width * height * channels);
  let seed = width * 31 + height;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const pixel = Math.floor(i / channels);
    const gradient = ((pixel % width) + Math.floor(pixel / width)) >> 4;
    out[i] = gradient + (noise ? seed >> 24 : 0);
  }
  return out;
}

export interface PngKind {
  channels: 1 | 2 | 3 | 4;
  depth: 1 | 8 | 16;
  interlace?: "Adam7";
}

export function encodedPng(width: number, height: number, kind: PngKind): Uint8Array {
  // 1-bit samples come packed, eight to a byte, each row starting on a byte.
  const n = kind.depth === 1
    ? height * Math.ceil((width * kind.channels) / 8)
    : width * height * kind.channels;
  const data = kind.depth === 16 ? new Uint16Array(n) : new Uint8Array(n);
  const noise = pixels(width, height, kind.channels);
  for (let i = 0; i < n; i++) data[i] = kind.depth === 16 ? noise[i] * 257 : noise[i];
  return encodePng(
    { width, height, data, channels: kind.channels, depth: kind.depth },
    { interlace: kind.interlace ?? "null" },
  );
}

export function encodedJpeg(
  width: number,
  height: number,
  quality = 85,
  options: { noise?: boolean } = {},
): Uint8Array {
  const data = pixels(width, height, 4, options.noise ?? true);
  return jpeg.encode({ data, width, height }, quality).data;
}

let webpEncoder: Promise<void> | null = null;

export async function encodedWebp(
  width: number,
  height: number,
  options: { lossless?: boolean; alpha?: boolean; noise?: boolean } = {},
): Promise<Uint8Array> {
  webpEncoder ??= (async () => {
    const url = new URL(import.meta.resolve("@jsquash/webp/codec/enc/webp_enc.wasm"));
    await initWebpEncoder(await WebAssembly.compile(await Deno.readFile(url)));
  })();
  await webpEncoder;
  const data = new Uint8ClampedArray(pixels(width, height, 4, options.noise ?? true));
  // Opaque unless asked: then lossy output is the simple format (one "VP8 " chunk).
  if (!options.alpha) { for (let i = 3; i < data.length; i += 4) data[i] = 255; }
  const image = { data, width, height, colorSpace: "srgb" } as ImageData;
  const out = await encodeWebp(image, { quality: 75, lossless: options.lossless ? 1 : 0 });
  return new Uint8Array(out);
}
