/**
 * Test fixtures for image ingestion: tiny, real PNG / JPEG / WebP files that
 * can be padded to an exact byte size (e.g. exactly 1 MiB), plus local test
 * servers and a connection guard for the fetcher tests.
 *
 * The images are built by hand, without an encoder library, and decode with
 * libpng, libjpeg and libwebp (checked with pngcheck, djpeg and dwebp).
 */

// ---------------------------------------------------------------------------
// PNG

/** Raw pixel data above this is not generated; see {@link makePng}. */
const MAX_REAL_PIXEL_BYTES = 16 * 1024 * 1024;

/**
 * An 8-bit greyscale PNG of the given size, all black.
 *
 * `totalBytes` pads the file to exactly that many bytes with a private
 * ancillary chunk (which decoders skip), so it must equal the unpadded size
 * or exceed it by at least 12 (one empty chunk). Images with more than 16 MiB
 * of pixel data (e.g. 20000x20000, for dimension-limit tests) get a valid
 * header but no pixel data, because only the header matters to a sniffer.
 */
export function makePng(width: number, height: number, totalBytes?: number): Uint8Array {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 0, 0, 0, 0], 8); // bit depth 8, greyscale, deflate, no filter, no interlace

  const rawSize = height * (width + 1); // one filter byte per scanline
  const raw = rawSize <= MAX_REAL_PIXEL_BYTES ? new Uint8Array(rawSize) : new Uint8Array(0);
  const parts = [
    PNG_SIGNATURE,
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", zlibStored(raw)),
  ];
  const iend = pngChunk("IEND", new Uint8Array(0));
  const size = sum(parts) + iend.length;
  if (totalBytes !== undefined && totalBytes !== size) {
    const gap = checkGap("PNG", size, totalBytes, 12);
    // "paDd": ancillary, private, safe-to-copy; decoders ignore it.
    parts.push(pngChunk("paDd", new Uint8Array(gap - 12)));
  }
  parts.push(iend);
  return join(parts);
}

const PNG_SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(ascii(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** A zlib stream of stored (uncompressed) deflate blocks: exact size, no encoder needed. */
function zlibStored(data: Uint8Array): Uint8Array {
  const blocks: Uint8Array[] = [new Uint8Array([0x78, 0x01])];
  let offset = 0;
  do {
    const length = Math.min(65535, data.length - offset);
    const last = offset + length >= data.length ? 1 : 0;
    const header = new Uint8Array([
      last,
      length & 255,
      length >> 8,
      ~length & 255,
      (~length >> 8) & 255,
    ]);
    blocks.push(header, data.subarray(offset, offset + length));
    offset += length;
  } while (offset < data.length);
  const adler = new Uint8Array(4);
  new DataView(adler.buffer).setUint32(0, adler32(data));
  blocks.push(adler);
  return join(blocks);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 255] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

// ---------------------------------------------------------------------------
// JPEG

/**
 * A baseline greyscale JPEG of the given size (up to 65535 per side), flat
 * mid-grey: every 8x8 block is coded as "DC difference 0, end of block" with
 * one-symbol Huffman tables, i.e. two bits per block.
 *
 * `totalBytes` pads with COM segments (4..65537 bytes each) and, for gaps
 * under 4 bytes, 0xFF fill bytes before a marker, which T.81 B.1.1.2 allows.
 * Any `totalBytes` at or above the unpadded size works.
 */
export function makeJpeg(width: number, height: number, totalBytes?: number): Uint8Array {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = blocks * 2;
  const scan = new Uint8Array(Math.ceil(bits / 8));
  // Zero bits for the codes, then 1-bits to pad the last byte as T.81 requires.
  const used = bits % 8;
  if (used !== 0) scan[scan.length - 1] = (1 << (8 - used)) - 1;

  const app0 = segment(0xe0, [...ascii("JFIF"), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const dqt = segment(0xdb, [0, ...new Array(64).fill(1)]);
  const sof0 = segment(0xc0, [
    8,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    1,
    1,
    0x11,
    0,
  ]);
  const oneCodeTable = (tableClass: number) =>
    segment(0xc4, [tableClass << 4, 1, ...new Array(15).fill(0), 0]);
  const sos = segment(0xda, [1, 1, 0x00, 0, 63, 0]);
  const head = [new Uint8Array([0xff, 0xd8]), app0];
  const rest = [
    dqt,
    sof0,
    oneCodeTable(0),
    oneCodeTable(1),
    sos,
    scan,
    new Uint8Array([0xff, 0xd9]),
  ];

  const size = sum(head) + sum(rest);
  const padding: Uint8Array[] = [];
  if (totalBytes !== undefined && totalBytes !== size) {
    let gap = checkGap("JPEG", size, totalBytes, 1);
    if (gap < 4) {
      padding.push(new Uint8Array(gap).fill(0xff));
    } else {
      while (gap > 0) {
        let take = Math.min(gap, 65537);
        if (gap - take > 0 && gap - take < 4) take = gap - 4;
        padding.push(segment(0xfe, new Array(take - 4).fill(0x20)));
        gap -= take;
      }
    }
  }
  return join([...head, ...padding, ...rest]);
}

function segment(marker: number, payload: ArrayLike<number>): Uint8Array {
  const length = payload.length + 2;
  const out = new Uint8Array(2 + length);
  out.set([0xff, marker, length >> 8, length & 255]);
  out.set(payload, 4);
  return out;
}

// ---------------------------------------------------------------------------
// WebP

export type WebpFormat = "lossless" | "extended" | "lossy";

/**
 * A WebP of the given size.
 *
 * - "lossless" (default): simple-format VP8L, fully transparent-free black,
 *   with one-symbol prefix codes so every pixel costs zero bits. Up to 16384
 *   per side (the VP8L limit).
 * - "extended": a VP8X header followed by the same VP8L bitstream. The VP8X
 *   canvas can state up to 2^24 per side; past 16384 the image chunk cannot
 *   match, so such files are for header tests only.
 * - "lossy": a VP8 key-frame header only (start code and dimensions, no
 *   coefficient data, so it does not decode); for sniffer tests.
 *
 * `totalBytes` switches lossless to extended (padding needs a chunk that
 * simple-format readers would not expect) and adds an unknown chunk, which
 * decoders skip. RIFF chunks are even-sized, so WebP files always have an even
 * length: `totalBytes` must be even and equal to, or at least 8 above, the
 * unpadded size.
 */
export function makeWebp(
  width: number,
  height: number,
  totalBytes?: number,
  format: WebpFormat = "lossless",
): Uint8Array {
  const effective = totalBytes !== undefined && format === "lossless" ? "extended" : format;
  const chunks: Uint8Array[] = [];
  if (effective === "lossy") {
    chunks.push(riffChunk("VP8 ", vp8KeyFrameHeader(width, height)));
  } else {
    if (effective === "extended") chunks.push(riffChunk("VP8X", vp8xPayload(width, height)));
    chunks.push(riffChunk("VP8L", vp8lBitstream(Math.min(width, 16384), Math.min(height, 16384))));
  }
  const size = 12 + sum(chunks);
  if (totalBytes !== undefined && totalBytes !== size) {
    if (totalBytes % 2 !== 0) throw new RangeError("WebP files always have an even size");
    const gap = checkGap("WebP", size, totalBytes, 8);
    chunks.push(riffChunk("XPAD", new Uint8Array(gap - 8)));
  }
  const body = join(chunks);
  const header = new Uint8Array(12);
  header.set(ascii("RIFF"), 0);
  new DataView(header.buffer).setUint32(4, 4 + body.length, true);
  header.set(ascii("WEBP"), 8);
  return join([header, body]);
}

function riffChunk(fourcc: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + data.length + (data.length % 2));
  out.set(ascii(fourcc), 0);
  new DataView(out.buffer).setUint32(4, data.length, true);
  out.set(data, 8);
  return out;
}

function vp8xPayload(width: number, height: number): Uint8Array {
  const w = width - 1;
  const h = height - 1;
  return new Uint8Array([
    0,
    0,
    0,
    0,
    w & 255,
    (w >> 8) & 255,
    (w >> 16) & 255,
    h & 255,
    (h >> 8) & 255,
    (h >> 16) & 255,
  ]);
}

function vp8lBitstream(width: number, height: number): Uint8Array {
  const bits = new BitWriter();
  bits.write(0x2f, 8); // signature
  bits.write(width - 1, 14);
  bits.write(height - 1, 14);
  bits.write(0, 1); // alpha hint
  bits.write(0, 3); // version
  bits.write(0, 1); // no transform
  bits.write(0, 1); // no colour cache
  bits.write(0, 1); // no meta prefix codes
  // Green, red, blue: simple code, one symbol, 1-bit symbol 0.
  for (let i = 0; i < 3; i++) bits.write(0b0001, 4);
  // Alpha: simple code, one symbol, 8-bit symbol 255 (opaque).
  bits.write(1, 1);
  bits.write(0, 1);
  bits.write(1, 1);
  bits.write(255, 8);
  bits.write(0b0001, 4); // distance: one symbol, never used
  return bits.bytes();
}

function vp8KeyFrameHeader(width: number, height: number): Uint8Array {
  // Frame tag: key frame (bit 0 = 0), version 0, show_frame 1, partition size 0.
  return new Uint8Array([
    0x10,
    0x00,
    0x00,
    0x9d,
    0x01,
    0x2a,
    width & 255,
    (width >> 8) & 0x3f,
    height & 255,
    (height >> 8) & 0x3f,
  ]);
}

/** Least-significant-bit-first writer, as VP8L reads. */
class BitWriter {
  #out: number[] = [];
  #acc = 0;
  #n = 0;
  write(value: number, count: number): void {
    for (let i = 0; i < count; i++) {
      this.#acc |= ((value >> i) & 1) << this.#n;
      if (++this.#n === 8) {
        this.#out.push(this.#acc);
        this.#acc = 0;
        this.#n = 0;
      }
    }
  }
  bytes(): Uint8Array {
    return new Uint8Array(this.#n > 0 ? [...this.#out, this.#acc] : this.#out);
  }
}

// ---------------------------------------------------------------------------
// Non-images

export const GIF_1X1 = new Uint8Array([
  ...ascii("GIF89a"),
  1,
  0,
  1,
  0,
  0x80,
  0,
  0,
  0,
  0,
  0,
  255,
  255,
  255,
  0x2c,
  0,
  0,
  0,
  0,
  1,
  0,
  1,
  0,
  0,
  2,
  2,
  0x44,
  0x01,
  0,
  0x3b,
]);
export const HTML_PAGE = new TextEncoder().encode("<!doctype html><html><body>hi</body></html>");
export const SVG_IMAGE = new TextEncoder().encode(
  '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
);

// ---------------------------------------------------------------------------
// Byte helpers

function checkGap(kind: string, size: number, totalBytes: number, minimum: number): number {
  const gap = totalBytes - size;
  if (gap < minimum) {
    throw new RangeError(
      `${kind} of this size is ${size} bytes; totalBytes must be ${size} or at least ${
        size + minimum
      }`,
    );
  }
  return gap;
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function sum(parts: Uint8Array[]): number {
  return parts.reduce((n, p) => n + p.length, 0);
}

export function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(sum(parts));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

// ---------------------------------------------------------------------------
// Network helpers for fetcher tests

/**
 * Test-only TLS material: a throwaway CA and a leaf certificate for img.test,
 * localhost and 127.0.0.1 (valid 2000-2099). The key protects nothing else.
 */
export const TEST_CA_PEM = `-----BEGIN CERTIFICATE-----
MIIBbzCCARagAwIBAgICEAAwCgYIKoZIzj0EAwIwHjEcMBoGA1UEAwwTaW1hZ2Ut
ZmV0Y2ggdGVzdCBDQTAgFw0wMDAxMDEwMDAwMDBaGA8yMDk5MTIzMTAwMDAwMFow
HjEcMBoGA1UEAwwTaW1hZ2UtZmV0Y2ggdGVzdCBDQTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABCWBHJhoJUtqk7n7gggThPX77b3XLq77YAWoZ9GqLstVAvYIULOH
2sg9lq5AV8FFosn8pJNZmfDUm1GL7ElxJcejQjBAMA8GA1UdEwEB/wQFMAMBAf8w
DgYDVR0PAQH/BAQDAgEGMB0GA1UdDgQWBBSPpqoZ823B19Tomd2rgKmCYtW8jDAK
BggqhkjOPQQDAgNHADBEAiBswxQqi0TyCQQSun8QOYqlydyLi2qgdbCjZl4g5dGE
JAIgKj+2/37GDg7XgpZWMgKjJiMBJhVI6tsERqich2HOMao=
-----END CERTIFICATE-----
`;

const TEST_LEAF_PEM = `-----BEGIN CERTIFICATE-----
MIIBwDCCAWagAwIBAgICEAEwCgYIKoZIzj0EAwIwHjEcMBoGA1UEAwwTaW1hZ2Ut
ZmV0Y2ggdGVzdCBDQTAgFw0wMDAxMDEwMDAwMDBaGA8yMDk5MTIzMTAwMDAwMFow
EzERMA8GA1UEAwwIaW1nLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASA
VsEEbk8Ob1/tqvKVkqn/6TzqK7QyzKffK8gV+Jk78VnNhaTVdR0pg6QzipTQ9Axc
4SK2bE8O9egyZPlX0jz2o4GcMIGZMAwGA1UdEwEB/wQCMAAwDgYDVR0PAQH/BAQD
AgeAMBMGA1UdJQQMMAoGCCsGAQUFBwMBMCQGA1UdEQQdMBuCCGltZy50ZXN0ggls
b2NhbGhvc3SHBH8AAAEwHwYDVR0jBBgwFoAUj6aqGfNtwdfU6Jndq4CpgmLVvIww
HQYDVR0OBBYEFKiXZ3fcaEiopMXMGvDIMCKGSpJmMAoGCCqGSM49BAMCA0gAMEUC
IFA6RTQIOf/x3RdDabm+a2OAzAokX/o8lZLr98NHKGImAiEA3UEpqOkbrEdYiizc
94+ZwnKFeYUoFDjM+wDRgLCxweA=
-----END CERTIFICATE-----
`;

const TEST_LEAF_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgR2w9msKe6mVtihf0
ZarW0CNzpaiHxUPE2qytd5UQ2YehRANCAASAVsEEbk8Ob1/tqvKVkqn/6TzqK7Qy
zKffK8gV+Jk78VnNhaTVdR0pg6QzipTQ9Axc4SK2bE8O9egyZPlX0jz2
-----END PRIVATE KEY-----
`;

export interface TestServer {
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Request heads received, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

export type RawHandler = (conn: Deno.Conn, request: string) => Promise<void>;

/**
 * A TCP (or TLS) server on loopback and a random port that reads each
 * request head and hands the connection to `handle` for a hand-written reply.
 */
export function startServer(
  handle: RawHandler,
  options: { tls?: boolean; hostname?: "127.0.0.1" | "::1" } = {},
): TestServer {
  const hostname = options.hostname ?? "127.0.0.1";
  const listener: Deno.Listener = options.tls
    ? Deno.listenTls({ hostname, port: 0, cert: TEST_LEAF_PEM, key: TEST_LEAF_KEY })
    : Deno.listen({ hostname, port: 0 });
  const requests: string[] = [];
  const handlers = new Set<Promise<void>>();
  let accepted = 0;

  const serve = async (conn: Deno.Conn) => {
    try {
      const request = await readHead(conn);
      if (request === null) return;
      requests.push(request);
      await handle(conn, request);
    } catch {
      // The client hung up or the handshake failed; that is often the point of the test.
    } finally {
      try {
        conn.close();
      } catch {
        // Already closed by the handler.
      }
    }
  };
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        const p = serve(conn);
        handlers.add(p);
        p.finally(() => handlers.delete(p));
      }
    } catch {
      // Listener closed.
    }
  })();

  return {
    port: (listener.addr as Deno.NetAddr).port,
    get accepted() {
      return accepted;
    },
    requests,
    async close() {
      listener.close();
      await loop;
      await Promise.all([...handlers]);
    },
  };
}

async function readHead(conn: Deno.Conn): Promise<string | null> {
  const buf = new Uint8Array(8192);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) return null;
    text += new TextDecoder().decode(buf.subarray(0, n));
    if (text.length > 65536) return null;
  }
  return text;
}

/** Builds a raw HTTP/1.1 response. */
export function httpResponse(
  status: number,
  headers: Record<string, string> | [string, string][],
  body: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  const head = [`HTTP/1.1 ${status} X`, ...pairs.map(([k, v]) => `${k}: ${v}`), "", ""].join(
    "\r\n",
  );
  return join([new TextEncoder().encode(head), body]);
}

export async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await conn.write(data.subarray(written));
}

/**
 * A stand-in for Deno.connect that records every attempt and only lets
 * loopback (127.0.0.1, ::1) through, so a policy bug can never send test traffic to a real
 * private or public address.
 */
export function guardedConnect(): {
  attempts: string[];
  connect: (to: { hostname: string; port: number }) => void;
} {
  const attempts: string[] = [];
  return {
    attempts,
    connect(to) {
      attempts.push(`${to.hostname}:${to.port}`);
      if (to.hostname !== "127.0.0.1" && to.hostname !== "::1") {
        throw new Error(`test guard: refusing to connect to ${to.hostname}`);
      }
    },
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
