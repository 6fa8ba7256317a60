/**
 * PNG pixel data checked without keeping it: the IDAT payloads are one zlib stream, inflated by
 * the runtime's DecompressionStream("deflate") (zlib framing: header, deflate, Adler-32), and the
 * inflated bytes are counted and their scanline filter bytes read as they come, then dropped.
 *
 * The size is exact (PNG spec 7.2, 8.2): non-interlaced, height * (1 + rowbytes); Adam7, the sum
 * over its seven passes of each pass's rows * (1 + its rowbytes), empty passes skipped.
 */

export interface Ihdr {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlace: number;
}

/** Samples per pixel by colour type, and the bit depths each allows (PNG spec table 11.1). */
const COLOUR_TYPES: Record<number, { channels: number; depths: number[] }> = {
  0: { channels: 1, depths: [1, 2, 4, 8, 16] },
  2: { channels: 3, depths: [8, 16] },
  3: { channels: 1, depths: [1, 2, 4, 8] },
  4: { channels: 2, depths: [8, 16] },
  6: { channels: 4, depths: [8, 16] },
};

/** IHDR's fields, or why they describe no image. */
export function readIhdr(b: Uint8Array): Ihdr | string {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const header = {
    width: view.getUint32(16),
    height: view.getUint32(20),
    bitDepth: b[24],
    colorType: b[25],
    interlace: b[28],
  };
  const colour = COLOUR_TYPES[header.colorType];
  if (!colour) return `PNG colour type ${header.colorType} does not exist`;
  if (!colour.depths.includes(header.bitDepth)) {
    return `PNG bit depth ${header.bitDepth} is not allowed for colour type ${header.colorType}`;
  }
  if (b[26] !== 0 || b[27] !== 0) return "PNG names an unknown compression or filter method";
  if (header.interlace > 1) return `PNG interlace method ${header.interlace} does not exist`;
  return header;
}

/** [x start, y start, x step, y step] of the seven Adam7 passes. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** Each non-empty pass (one for a non-interlaced image) as rows of `rowBytes` plus a filter byte. */
export function scanlines(h: Ihdr): { rows: number; rowBytes: number }[] {
  const bits = COLOUR_TYPES[h.colorType].channels * h.bitDepth;
  const rowBytes = (width: number) => Math.ceil((width * bits) / 8);
  if (h.interlace === 0) return [{ rows: h.height, rowBytes: rowBytes(h.width) }];
  return ADAM7.map(([x0, y0, dx, dy]) => ({
    columns: Math.ceil(Math.max(0, h.width - x0) / dx),
    rows: Math.ceil(Math.max(0, h.height - y0) / dy),
  }))
    .filter((p) => p.columns > 0 && p.rows > 0)
    .map((p) => ({ rows: p.rows, rowBytes: rowBytes(p.columns) }));
}

export const expectedSize = (h: Ihdr) =>
  scanlines(h).reduce((n, p) => n + p.rows * (1 + p.rowBytes), 0);

/**
 * The inflater turns each piece written into all of its output at once, and deflate expands at
 * most 1032 to 1: pieces of 1 KiB keep every output chunk near 1 MiB, whatever the image.
 */
const FEED_BYTES = 1024;

/**
 * Inflates `idat` and checks it against `header`: null when the pixel data is what IHDR says,
 * otherwise the reason a wallet could not show it.
 */
export async function checkPixelData(
  idat: Uint8Array<ArrayBuffer>[],
  header: Ihdr,
): Promise<string | null> {
  const expected = expectedSize(header);
  const rows = new FilterBytes(scanlines(header));
  const inflate = new DecompressionStream("deflate");
  const writer = inflate.writable.getWriter();
  const feeding = (async () => {
    for (const chunk of idat) {
      for (let at = 0; at < chunk.length; at += FEED_BYTES) {
        await writer.write(chunk.subarray(at, at + FEED_BYTES));
      }
    }
    await writer.close();
  })();
  feeding.catch(() => {}); // Its failure shows on the readable side, read below.
  const reader = inflate.readable.getReader();
  let total = 0;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      total += next.value.length;
      if (total > expected) {
        return `PNG pixel data inflates past the ${expected} bytes its header implies`;
      }
      const bad = rows.check(next.value);
      if (bad !== null) return `PNG scanline ${bad.row} has filter type ${bad.filter}; 0-4 exist`;
    }
    await feeding;
  } catch {
    return isZlibHeader(first(idat))
      ? "PNG pixel data is a corrupt zlib stream, or has data after its end"
      : "PNG pixel data is not a zlib stream";
  } finally {
    reader.cancel().catch(() => {});
    writer.abort().catch(() => {});
  }
  if (total < expected) {
    return `PNG pixel data inflates to ${total} bytes; its header implies ${expected}`;
  }
  return null;
}

function first(chunks: Uint8Array[]): Uint8Array {
  const bytes: number[] = [];
  for (const c of chunks) {
    bytes.push(...c.subarray(0, 2 - bytes.length));
    if (bytes.length === 2) break;
  }
  return new Uint8Array(bytes);
}

/** RFC 1950 2.2: method 8 (deflate), a window of at most 32 KiB, the check bits right. */
const isZlibHeader = (b: Uint8Array) =>
  b.length === 2 && (b[0] & 0x0f) === 8 && b[0] >> 4 <= 7 && ((b[0] << 8) | b[1]) % 31 === 0;

/** Walks the inflated bytes chunk by chunk, reading the filter byte at the start of each row. */
class FilterBytes {
  #passes: { rows: number; rowBytes: number }[];
  #pass = 0;
  #row = 0;
  #rowNumber = 0;
  /** Bytes of the current row (filter byte included) still to come. */
  #left: number;

  constructor(passes: { rows: number; rowBytes: number }[]) {
    this.#passes = passes;
    this.#left = passes.length ? passes[0].rowBytes + 1 : 0;
  }

  check(chunk: Uint8Array): { row: number; filter: number } | null {
    let at = 0;
    while (at < chunk.length && this.#pass < this.#passes.length) {
      const pass = this.#passes[this.#pass];
      if (this.#left === pass.rowBytes + 1 && chunk[at] > 4) {
        return { row: this.#rowNumber, filter: chunk[at] };
      }
      const take = Math.min(this.#left, chunk.length - at);
      at += take;
      this.#left -= take;
      if (this.#left === 0) this.#nextRow();
    }
    return null;
  }

  #nextRow(): void {
    this.#rowNumber++;
    if (++this.#row === this.#passes[this.#pass].rows) {
      this.#row = 0;
      this.#pass++;
    }
    if (this.#pass < this.#passes.length) this.#left = this.#passes[this.#pass].rowBytes + 1;
  }
}
