/**
 * Identifies PNG, JPEG and WebP images from their bytes alone.
 *
 * Declared types (data: URL MIME types, Content-Type headers, file names) are
 * attacker-controlled, so the only thing we trust is the magic number and the
 * dimensions encoded in the image header. Nothing here decodes pixel data.
 */

/** Largest image we accept, in bytes, whichever way it arrives. */
export const MAX_IMAGE_BYTES = 1_048_576;

/** Largest width or height we accept; bigger images are decompression bombs waiting to happen. */
export const MAX_IMAGE_DIMENSION = 16_384;

export type ImageType = "png" | "jpeg" | "webp";

export interface SniffedImage {
  type: ImageType;
  mime: "image/png" | "image/jpeg" | "image/webp";
  ext: "png" | "jpg" | "webp";
  width: number;
  height: number;
}

export type InspectResult =
  | { ok: true; image: SniffedImage }
  | { ok: false; reason: string };

export const NOT_AN_IMAGE = "not a PNG, JPEG or WebP image";

const FORMATS = {
  png: { type: "png", mime: "image/png", ext: "png" },
  jpeg: { type: "jpeg", mime: "image/jpeg", ext: "jpg" },
  webp: { type: "webp", mime: "image/webp", ext: "webp" },
} as const;

type Header =
  | { kind: "image"; type: ImageType; width: number; height: number }
  | { kind: "unreadable"; type: ImageType }
  | { kind: "unknown" };

/**
 * Identifies the image and checks its dimensions, explaining any refusal in a
 * short sentence suitable for an API error message.
 */
export function inspectImage(bytes: Uint8Array): InspectResult {
  const header = readHeader(bytes);
  if (header.kind === "unknown") return { ok: false, reason: NOT_AN_IMAGE };
  if (header.kind === "unreadable") {
    return { ok: false, reason: `${label(header.type)} image dimensions could not be read` };
  }
  const { type, width, height } = header;
  if (width === 0 || height === 0) {
    return { ok: false, reason: `image dimensions ${width}x${height} are invalid` };
  }
  if (width > MAX_IMAGE_DIMENSION || height > MAX_IMAGE_DIMENSION) {
    return {
      ok: false,
      reason: `image dimensions ${width}x${height} exceed ${MAX_IMAGE_DIMENSION} pixels per side`,
    };
  }
  return { ok: true, image: { ...FORMATS[type], width, height } };
}

/** Like {@link inspectImage}, for callers that only need a yes or no. */
export function sniffImage(bytes: Uint8Array): SniffedImage | null {
  const result = inspectImage(bytes);
  return result.ok ? result.image : null;
}

function label(type: ImageType): string {
  return type === "png" ? "PNG" : type === "jpeg" ? "JPEG" : "WebP";
}

function readHeader(b: Uint8Array): Header {
  if (startsWith(b, PNG_SIGNATURE)) return readPng(b);
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return readJpeg(b);
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return readWebp(b);
  return { kind: "unknown" };
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function readPng(b: Uint8Array): Header {
  // The PNG spec requires IHDR to be the first chunk and exactly 13 bytes long.
  if (b.length < 24 || u32be(b, 8) !== 13 || ascii(b, 12, 4) !== "IHDR") {
    return { kind: "unreadable", type: "png" };
  }
  return { kind: "image", type: "png", width: u32be(b, 16), height: u32be(b, 20) };
}

function readJpeg(b: Uint8Array): Header {
  const unreadable: Header = { kind: "unreadable", type: "jpeg" };
  let i = 2;
  while (i < b.length) {
    if (b[i] !== 0xff) return unreadable;
    // Any number of 0xFF fill bytes may precede a marker (ITU T.81 B.1.1.2).
    while (i < b.length && b[i] === 0xff) i++;
    if (i >= b.length) return unreadable;
    const marker = b[i++];
    // Markers without a length field: TEM, RSTn, SOI. A 0x00 here is stuffing
    // that cannot occur outside entropy-coded data, so the stream is corrupt.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    // Reaching EOI or the first scan without a frame header means there are no
    // dimensions to find: SOF always precedes SOS.
    if (marker === 0x00 || marker === 0xd9 || marker === 0xda) return unreadable;
    if (i + 2 > b.length) return unreadable;
    const length = u16be(b, i);
    if (length < 2) return unreadable;
    if (isStartOfFrame(marker)) {
      // Segment: length(2) precision(1) height(2) width(2).
      if (length < 7 || i + 7 > b.length) return unreadable;
      return { kind: "image", type: "jpeg", height: u16be(b, i + 3), width: u16be(b, i + 5) };
    }
    i += length;
  }
  return unreadable;
}

/** SOF0..SOF15 share the 0xC0-0xCF range with DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
    marker !== 0xcc;
}

function readWebp(b: Uint8Array): Header {
  const unreadable: Header = { kind: "unreadable", type: "webp" };
  if (b.length < 20) return unreadable;
  const chunk = ascii(b, 12, 4);
  const data = 20;
  if (chunk === "VP8 ") {
    // Lossy bitstream (RFC 6386 9.1): 3-byte frame tag whose low bit is 0 for
    // a key frame, start code 9D 01 2A, then 14-bit width and height.
    if (b.length < data + 10 || (b[data] & 1) !== 0) return unreadable;
    if (b[data + 3] !== 0x9d || b[data + 4] !== 0x01 || b[data + 5] !== 0x2a) return unreadable;
    return {
      kind: "image",
      type: "webp",
      width: u16le(b, data + 6) & 0x3fff,
      height: u16le(b, data + 8) & 0x3fff,
    };
  }
  if (chunk === "VP8L") {
    // Lossless bitstream: signature 0x2F, then width-1 and height-1 as 14-bit
    // fields, an alpha hint bit and a 3-bit version that must be 0.
    if (b.length < data + 5 || b[data] !== 0x2f) return unreadable;
    const bits = u32le(b, data + 1);
    if (bits >>> 29 !== 0) return unreadable;
    return {
      kind: "image",
      type: "webp",
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
    };
  }
  if (chunk === "VP8X") {
    // Extended format: flags(1) reserved(3) canvas width-1 (24 bits) and
    // canvas height-1 (24 bits), little-endian.
    if (b.length < data + 10) return unreadable;
    return {
      kind: "image",
      type: "webp",
      width: u24le(b, data + 4) + 1,
      height: u24le(b, data + 7) + 1,
    };
  }
  return unreadable;
}

function startsWith(b: Uint8Array, prefix: number[]): boolean {
  if (b.length < prefix.length) return false;
  return prefix.every((v, i) => b[i] === v);
}

function ascii(b: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...b.subarray(at, at + length));
}

function u16be(b: Uint8Array, at: number): number {
  return (b[at] << 8) | b[at + 1];
}

function u32be(b: Uint8Array, at: number): number {
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}

function u16le(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

function u24le(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
}

function u32le(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}
