/**
 * Decodes an image's pixel data the way a wallet's image decoder would, after verify-image.ts has
 * walked its container: an image whose container is sound but whose pixels are garbage (a PNG
 * whose IDAT holds an HTML page, a JPEG whose scan is text) is a broken logo on chain for good.
 *
 * - PNG: the IDAT data inflated as one zlib stream by the runtime's DecompressionStream, chunk by
 *   chunk and never kept, counted against the exact size IHDR implies (Adam7 passes included),
 *   every scanline's filter byte 0-4. Memory: one inflate window and one output chunk; it stops
 *   at the first byte past the size. The inflater refuses a stream that is not zlib or that has
 *   data after its end.
 * - JPEG: a full decode by libjpeg (mozjpeg, `@jsquash/jpeg`, WebAssembly), the decoder family
 *   browsers use; a scan it has to call corrupt (premature end, extraneous bytes, bad Huffman
 *   code) is refused, though libjpeg would paint what it could of it.
 * - WebP: a full decode by libwebp (`@jsquash/webp`, WebAssembly), which checks the bitstream
 *   against the VP8X canvas.
 *
 * Both WebAssembly decoders are compiled once per isolate from their package's .wasm file. Pure-JS
 * jpeg-js was tried first: it needs over 600 MB for a 4096 x 4096 JPEG and decodes garbage scans
 * without a word.
 *
 * The width and height bound is checked again here, before any decoder allocates.
 */
import decodeJpeg, { init as initJpeg } from "@jsquash/jpeg/decode.js";
import decodeWebp, { init as initWebp } from "@jsquash/webp/decode.js";
import type { ImageType } from "./sniff.ts";
import { checkPixelData, readIhdr } from "./png-pixels.ts";

export type DecodeResult = { ok: true } | { ok: false; reason: string };

export interface DecodeOptions {
  maxWidth: number;
  maxHeight: number;
}

/** Decodes `bytes` (a container verify-image.ts accepted) and says why it cannot be shown. */
export async function decodeImage(
  bytes: Uint8Array,
  image: { type: ImageType; width: number; height: number },
  opts: DecodeOptions,
): Promise<DecodeResult> {
  if (image.width > opts.maxWidth || image.height > opts.maxHeight) {
    return { ok: false, reason: `image is ${image.width}x${image.height} pixels; too large` };
  }
  try {
    if (image.type === "png") return await decodePng(bytes);
    if (image.type === "jpeg") return await decodeJpegImage(bytes, image);
    return await decodeWebpImage(bytes, image);
  } catch (e) {
    return { ok: false, reason: `${label(image.type)} does not decode: ${describe(e)}` };
  }
}

const label = (t: ImageType) => t === "png" ? "PNG" : t === "jpeg" ? "JPEG" : "WebP";
const describe = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 120);

async function decodePng(bytes: Uint8Array): Promise<DecodeResult> {
  const header = readIhdr(bytes);
  if (typeof header === "string") return { ok: false, reason: header };
  const problem = await checkPixelData([...idatChunks(bytes)], header);
  return problem === null ? { ok: true } : { ok: false, reason: problem };
}

/** The IDAT payloads in order (the container walk already checked every chunk). */
function* idatChunks(b: Uint8Array): Generator<Uint8Array<ArrayBuffer>> {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let at = 8; at + 12 <= b.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...b.subarray(at + 4, at + 8));
    if (type === "IDAT") yield b.slice(at + 8, at + 8 + length);
    at += 12 + length;
  }
}

let jpegReady: Promise<void> | null = null;
/** What libjpeg reported during the decode under way (decodes run one at a time: they are sync). */
let jpegWarnings: string[] = [];

function jpegDecoder(): Promise<void> {
  jpegReady ??= (async () => {
    const url = new URL(import.meta.resolve("@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm"));
    const report = (text: string) => jpegWarnings.push(text);
    // init's typing omits its second argument, the Emscripten module options it passes on.
    const withOptions = initJpeg as (module: WebAssembly.Module, options: object) => Promise<void>;
    await withOptions(await WebAssembly.compile(await Deno.readFile(url)), {
      print: report,
      printErr: report,
    });
  })();
  return jpegReady;
}

async function decodeJpegImage(
  bytes: Uint8Array,
  image: { width: number; height: number },
): Promise<DecodeResult> {
  await jpegDecoder();
  jpegWarnings = [];
  const decoded = await decodeJpeg(bytes.slice().buffer);
  const warnings = jpegWarnings;
  jpegWarnings = [];
  // libjpeg shows what it could of a corrupt scan and says so; a browser's libjpeg-turbo does the
  // same, which is a half-grey or garbled logo. That is refused, in libjpeg's own words.
  const corrupt = warnings.find((w) => /corrupt/i.test(w));
  if (corrupt) return { ok: false, reason: `JPEG does not decode cleanly: ${corrupt.trim()}` };
  if (decoded.width !== image.width || decoded.height !== image.height) {
    return { ok: false, reason: "JPEG decodes to a different size than its header says" };
  }
  return { ok: true };
}

let webpReady: Promise<void> | null = null;

/** libwebp's decoder, compiled once per isolate from the package's own .wasm file. */
function webpDecoder(): Promise<void> {
  webpReady ??= (async () => {
    const url = new URL(import.meta.resolve("@jsquash/webp/codec/dec/webp_dec.wasm"));
    await initWebp(await WebAssembly.compile(await Deno.readFile(url)));
  })();
  return webpReady;
}

async function decodeWebpImage(
  bytes: Uint8Array,
  image: { width: number; height: number },
): Promise<DecodeResult> {
  await webpDecoder();
  const copy = bytes.slice().buffer;
  const decoded = await decodeWebp(copy);
  if (decoded.width !== image.width || decoded.height !== image.height) {
    return { ok: false, reason: "WebP decodes to a different size than its header says" };
  }
  return { ok: true };
}
