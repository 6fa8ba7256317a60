/**
 * Verifies a PNG, JPEG or WebP as a whole image before it is hosted, and strips what can leak
 * privacy. `sniff.ts` names the type from the first bytes; this reads the container to its end:
 *
 * - PNG: the chunks from IHDR through IEND, every chunk's CRC, IDAT present; nothing after IEND.
 * - JPEG: the marker segments from SOI through EOI, the entropy-coded data after each SOS scanned
 *   for its next marker; a frame header (SOFn) before the first scan; nothing after EOI.
 * - WebP: the RIFF size equals the file's, and the chunks inside tile it exactly.
 * - The pixel bound (IMAGE_MAX_WIDTH x IMAGE_MAX_HEIGHT, 4096 x 4096 by default): every wallet
 *   that shows the image must decode it, and a 782 KB PNG can inflate to 805 MB.
 * - Stripped: EXIF GPS (and the EXIF thumbnail, which can show what a crop removed), XMP and
 *   Photoshop/IPTC blocks (both can carry a location), PNG text and time chunks. The bytes then
 *   hosted are the stripped ones; their SHA-256 is the image id.
 *
 * What is a library's job uses one: CRC-32 from `crc-32` (SheetJS), EXIF rewriting from
 * `piexifjs` (both pure JS, so they run on Deno Deploy). The container walks are our own: none of
 * the listed packages reports where an image ends or bounds a chunk's length before allocating it
 * (png-chunks-extract allocates whatever length a chunk claims and ignores bytes after IEND), and
 * the full decoders (pngjs, fast-png, jpeg-js) inflate every pixel, the very cost this refuses to
 * pay per upload on Deploy. Pixel data is never decoded here.
 */
import CRC32 from "crc-32";
import piexif from "piexifjs";
import type { SniffedImage } from "./sniff.ts";

export interface VerifyOptions {
  maxWidth: number;
  maxHeight: number;
}

export type VerifyResult =
  | { ok: true; bytes: Uint8Array; image: SniffedImage; stripped: string[] }
  | { ok: false; reason: string };

class Refused extends Error {}
const refuse = (reason: string): never => {
  throw new Refused(reason);
};

export function verifyImage(
  bytes: Uint8Array,
  image: SniffedImage,
  opts: VerifyOptions,
): VerifyResult {
  if (image.width > opts.maxWidth || image.height > opts.maxHeight) {
    return {
      ok: false,
      reason:
        `image is ${image.width}x${image.height} pixels; at most ${opts.maxWidth}x${opts.maxHeight}`,
    };
  }
  try {
    const walk = image.type === "png"
      ? walkPng(bytes)
      : image.type === "jpeg"
      ? walkJpeg(bytes)
      : walkWebp(bytes);
    return { ok: true, bytes: walk.bytes, image, stripped: walk.stripped };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.message };
    throw e;
  }
}

interface Walked {
  bytes: Uint8Array;
  stripped: string[];
}

const u32be = (b: Uint8Array, at: number) =>
  ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
const u32le = (b: Uint8Array, at: number) =>
  (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
const fourcc = (b: Uint8Array, at: number) => String.fromCharCode(...b.subarray(at, at + 4));

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const after = (extra: number, end: string) =>
  `${extra} bytes of other data follow the image's end (${end}); only the image is hosted`;

// ---------------------------------------------------------------------------------------------
// PNG

/** Ancillary chunks that carry text, EXIF (GPS) or a timestamp: none is needed to show an image. */
const PNG_STRIPPED = new Set(["eXIf", "tEXt", "zTXt", "iTXt", "tIME"]);

function walkPng(b: Uint8Array): Walked {
  const kept: Uint8Array[] = [b.subarray(0, 8)];
  const stripped: string[] = [];
  let at = 8;
  let first = true;
  let idat = false;
  for (;;) {
    if (at + 12 > b.length) refuse("PNG ends before its IEND chunk");
    const length = u32be(b, at);
    const type = fourcc(b, at + 4);
    if (length > 0x7fffffff || at + 12 + length > b.length) {
      refuse(`PNG chunk ${JSON.stringify(type)} runs past the end of the file`);
    }
    if (!/^[A-Za-z]{4}$/.test(type)) refuse("PNG chunk type is not four letters");
    if (first && type !== "IHDR") refuse("PNG does not start with IHDR");
    first = false;
    const crc = u32be(b, at + 8 + length);
    if ((CRC32.buf(b.subarray(at + 4, at + 8 + length)) >>> 0) !== crc) {
      refuse(`PNG chunk ${type} fails its CRC`);
    }
    const end = at + 12 + length;
    if (type === "IDAT") idat = true;
    if (PNG_STRIPPED.has(type)) stripped.push(type);
    else kept.push(b.subarray(at, end));
    at = end;
    if (type === "IEND") break;
  }
  if (!idat) refuse("PNG has no image data (IDAT)");
  if (at !== b.length) refuse(after(b.length - at, "IEND"));
  return { bytes: stripped.length ? concat(kept) : b, stripped };
}

// ---------------------------------------------------------------------------------------------
// JPEG

const latin1 = (b: Uint8Array) => {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode(...b.subarray(i, i + 8192));
  }
  return s;
};
const fromLatin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

const XMP_PREFIXES = ["http://ns.adobe.com/xap/1.0/\0", "http://ns.adobe.com/xmp/extension/\0"];

function walkJpeg(b: Uint8Array): Walked {
  if (b[0] !== 0xff || b[1] !== 0xd8) refuse("JPEG does not start with SOI");
  const kept: Uint8Array[] = [b.subarray(0, 2)];
  const stripped: string[] = [];
  let at = 2;
  let frame = false;
  let scans = 0;
  for (;;) {
    // A marker, after any fill bytes (0xFF) that may precede it.
    if (at >= b.length) refuse("JPEG ends before its EOI marker");
    if (b[at] !== 0xff) refuse("JPEG has bytes where a marker should be");
    const start = at;
    while (at < b.length && b[at] === 0xff) at++;
    if (at >= b.length) refuse("JPEG ends before its EOI marker");
    const marker = b[at++];
    if (marker === 0xd9) {
      kept.push(b.subarray(start, at));
      break;
    }
    if (marker === 0x00) refuse("JPEG has a stuffed byte where a marker should be");
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      kept.push(b.subarray(start, at));
      continue;
    }
    if (at + 2 > b.length) refuse("JPEG ends inside a segment");
    const length = (b[at] << 8) | b[at + 1];
    if (length < 2 || at + length > b.length) refuse("JPEG segment runs past the end of the file");
    const payload = b.subarray(at + 2, at + length);
    at += length;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (isFrame) frame = true;
    if (marker === 0xda) {
      if (!frame) refuse("JPEG has a scan before its frame header");
      scans++;
      const dataEnd = entropyEnd(b, at);
      kept.push(b.subarray(start, dataEnd));
      at = dataEnd;
      continue;
    }
    const segment = b.subarray(start, at);
    const text = latin1(payload.subarray(0, 40));
    if (marker === 0xe1 && text.startsWith("Exif\0\0")) {
      const cleaned = withoutGps(payload);
      if (cleaned === null) stripped.push("EXIF");
      else {
        if (cleaned.changed) stripped.push("EXIF GPS");
        kept.push(cleaned.segment);
      }
    } else if (marker === 0xe1 && XMP_PREFIXES.some((p) => text.startsWith(p))) {
      stripped.push("XMP");
    } else if (marker === 0xed) {
      stripped.push("Photoshop/IPTC");
    } else {
      kept.push(segment);
    }
  }
  if (scans === 0) refuse("JPEG has no image data (no scan)");
  if (at !== b.length) refuse(after(b.length - at, "EOI"));
  return { bytes: stripped.length ? concat(kept) : b, stripped };
}

/** Where the entropy-coded data that starts at `at` ends: at the next marker but RST and stuffing. */
function entropyEnd(b: Uint8Array, at: number): number {
  for (let i = at; i + 1 < b.length; i++) {
    if (b[i] !== 0xff) continue;
    const next = b[i + 1];
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) continue;
    return i;
  }
  return refuse("JPEG ends inside its image data, before EOI");
}

/**
 * The EXIF segment without its GPS block and thumbnail; null when it cannot be read (then the
 * whole segment goes: an EXIF block we cannot rewrite might hold a location).
 */
function withoutGps(payload: Uint8Array): { segment: Uint8Array; changed: boolean } | null {
  try {
    const exif = piexif.load(latin1(payload));
    const hadGps = Object.keys(exif.GPS ?? {}).length > 0 || 34853 in (exif["0th"] ?? {});
    const hadThumbnail = exif.thumbnail !== null || Object.keys(exif["1st"] ?? {}).length > 0;
    if (!hadGps && !hadThumbnail) {
      return {
        segment: concat([new Uint8Array([0xff, 0xe1]), lengthOf(payload), payload]),
        changed: false,
      };
    }
    exif.GPS = {};
    delete exif["0th"][34853];
    exif["1st"] = {};
    exif.thumbnail = null;
    const dumped = fromLatin1(piexif.dump(exif));
    if (dumped.length + 2 > 0xffff) return null;
    return {
      segment: concat([new Uint8Array([0xff, 0xe1]), lengthOf(dumped), dumped]),
      changed: true,
    };
  } catch {
    return null;
  }
}

const lengthOf = (payload: Uint8Array) => {
  const n = payload.length + 2;
  return new Uint8Array([n >> 8, n & 255]);
};

// ---------------------------------------------------------------------------------------------
// WebP

const WEBP_STRIPPED = new Set(["EXIF", "XMP "]);
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;

function walkWebp(b: Uint8Array): Walked {
  if (b.length < 20) refuse("WebP ends inside its header");
  const riffEnd = 8 + u32le(b, 4);
  if (riffEnd > b.length) refuse("WebP is shorter than its RIFF size says");
  const kept: Uint8Array[] = [];
  const stripped: string[] = [];
  let at = 12;
  let first = true;
  while (at < riffEnd) {
    if (at + 8 > riffEnd) refuse("WebP chunk header runs past the RIFF size");
    const type = fourcc(b, at);
    const size = u32le(b, at + 4);
    const end = at + 8 + size + (size % 2);
    if (end > riffEnd) refuse(`WebP chunk ${JSON.stringify(type)} runs past the RIFF size`);
    if (first && !["VP8 ", "VP8L", "VP8X"].includes(type)) {
      refuse("WebP does not start with a VP8, VP8L or VP8X chunk");
    }
    first = false;
    if (WEBP_STRIPPED.has(type)) stripped.push(type.trim());
    else kept.push(b.subarray(at, end));
    at = end;
  }
  if (first) refuse("WebP has no image chunk");
  if (riffEnd !== b.length) refuse(after(b.length - riffEnd, "RIFF size"));
  if (!stripped.length) return { bytes: b, stripped };
  if (fourcc(kept[0], 0) === "VP8X") {
    const vp8x = kept[0].slice();
    vp8x[8] &= ~(VP8X_EXIF | VP8X_XMP);
    kept[0] = vp8x;
  }
  const body = concat(kept);
  const header = new Uint8Array(12);
  header.set(b.subarray(0, 12));
  new DataView(header.buffer).setUint32(4, 4 + body.length, true);
  return { bytes: concat([header, body]), stripped };
}
