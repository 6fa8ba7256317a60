/**
 * Pixel data is decoded as a wallet would before an image is hosted (decode-image.ts): every
 * image that decodes (hand-made and library-made, each type, sizes up to the bound) passes; pixel
 * data that is garbage, short or long is refused with the reason named.
 */
import { deflateSync } from "node:zlib";
import CRC32 from "crc-32";
import { assert, assertEquals, assertMatch } from "../../support/assert.ts";
import { join, makeJpeg, makePng, makeWebp } from "./fixtures.ts";
import { encodedJpeg, encodedPng, encodedWebp } from "./encoded.ts";
import { sniffImage } from "../../../src/metadata/image/sniff.ts";
import { verifyImage } from "../../../src/metadata/image/verify-image.ts";
import { decodeImage } from "../../../src/metadata/image/decode-image.ts";
import { expectedSize } from "../../../src/metadata/image/png-pixels.ts";

const BOUND = { maxWidth: 4096, maxHeight: 4096 };
const HTML = new TextEncoder().encode("<html><script>alert(document.domain)</script></html>");

/** Sniffed, walked and decoded, as POST /v1/metadata does. */
async function check(bytes: Uint8Array, bound = BOUND) {
  const image = sniffImage(bytes);
  assert(image, "sniffs as an image");
  const walked = verifyImage(bytes, image, bound);
  if (!walked.ok) return walked;
  return await decodeImage(walked.bytes, image, bound);
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, CRC32.buf(out.subarray(4, 8 + data.length)) >>> 0);
  return out;
}

/** A PNG with `ihdr`'s header (width, height, depth, colour, interlace) and `idat` as its data. */
function pngWith(fields: { width: number; height: number; interlace?: number }, idat: Uint8Array) {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, fields.width);
  view.setUint32(4, fields.height);
  ihdr.set([8, 0, 0, 0, fields.interlace ?? 0], 8); // 8-bit greyscale
  return join([
    makePng(1, 1).subarray(0, 8),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", idat),
    pngChunk("IEND", new Uint8Array(0)),
  ]);
}

Deno.test("every image that decodes passes: hand-made and library-made, each type and size", async () => {
  const images: [string, Uint8Array][] = [
    ["hand PNG 1x1", makePng(1, 1)],
    ["hand PNG 300x200", makePng(300, 200)],
    ["hand PNG 4096x1", makePng(4096, 1)],
    ["hand PNG padded to 1 MiB", makePng(100, 100, 1_048_576)],
    ["fast-png RGBA8 64x48", encodedPng(64, 48, { channels: 4, depth: 8 })],
    ["fast-png grey 1-bit 33x17", encodedPng(33, 17, { channels: 1, depth: 1 })],
    ["fast-png RGB16 20x13", encodedPng(20, 13, { channels: 3, depth: 16 })],
    ["fast-png grey+alpha 512x384", encodedPng(512, 384, { channels: 2, depth: 8 })],
    [
      "fast-png Adam7 RGBA 37x23",
      encodedPng(37, 23, { channels: 4, depth: 8, interlace: "Adam7" }),
    ],
    ["fast-png Adam7 1x1", encodedPng(1, 1, { channels: 2, depth: 8, interlace: "Adam7" })],
    ["fast-png Adam7 5x3", encodedPng(5, 3, { channels: 1, depth: 8, interlace: "Adam7" })],
    ["hand JPEG 1x1", makeJpeg(1, 1)],
    ["hand JPEG 64x64", makeJpeg(64, 64)],
    ["hand JPEG 1x4096", makeJpeg(1, 4096)],
    ["jpeg-js 64x48", encodedJpeg(64, 48)],
    ["jpeg-js 333x211", encodedJpeg(333, 211, 50)],
    ["jpeg-js 1024x768", encodedJpeg(1024, 768)],
    ["hand WebP lossless 4x4", makeWebp(4, 4)],
    ["hand WebP extended 64x64", makeWebp(64, 64, 200)],
    ["libwebp lossy 64x48", await encodedWebp(64, 48)],
    ["libwebp lossy 800x600", await encodedWebp(800, 600)],
    ["libwebp lossy with alpha 64x48", await encodedWebp(64, 48, { alpha: true })],
    ["libwebp lossless 300x200", await encodedWebp(300, 200, { lossless: true })],
  ];
  for (const [what, bytes] of images) {
    assertEquals(await check(bytes), { ok: true }, what);
  }
});

Deno.test("the size a PNG header implies: rows plus filter bytes, Adam7 passes summed", () => {
  const grey = { bitDepth: 8, colorType: 0, interlace: 0 };
  assertEquals(expectedSize({ ...grey, width: 8, height: 8 }), 8 * 9);
  assertEquals(expectedSize({ width: 10, height: 3, bitDepth: 1, colorType: 0, interlace: 0 }), 9);
  assertEquals(expectedSize({ width: 2, height: 1, bitDepth: 16, colorType: 6, interlace: 0 }), 17);
  // 8x8 Adam7: passes of 1x1, 1x1, 2x1, 2x2, 4x2, 4x4, 8x4 pixels, one filter byte per row.
  assertEquals(expectedSize({ ...grey, width: 8, height: 8, interlace: 1 }), 79);
  // 1x1 Adam7: only the first pass has a pixel.
  assertEquals(expectedSize({ ...grey, width: 1, height: 1, interlace: 1 }), 2);
});

Deno.test("PNG pixel data that is not what its header says is refused, reason named", async () => {
  const raw = (n: number) => new Uint8Array(n); // filter 0, black rows
  const refused: [string, Uint8Array, RegExp][] = [
    // The polyglot: an 8x8 PNG whose IDAT holds an HTML page, CRCs all correct.
    ["IDAT holds HTML", pngWith({ width: 8, height: 8 }, HTML), /not a zlib stream/],
    [
      "one row short",
      pngWith({ width: 8, height: 8 }, deflateSync(raw(63))),
      /inflates to 63 .* 72/,
    ],
    [
      "one row long",
      pngWith({ width: 8, height: 8 }, deflateSync(raw(81))),
      /inflates past the 72/,
    ],
    [
      "filter byte 5",
      pngWith({ width: 8, height: 8 }, deflateSync(join([raw(9), new Uint8Array([5]), raw(62)]))),
      /scanline 1 has filter type 5/,
    ],
    [
      "zlib cut short",
      pngWith({ width: 64, height: 64 }, deflateSync(raw(65 * 64)).subarray(0, 6)),
      /inflates to|corrupt/,
    ],
    [
      "data after the zlib stream",
      pngWith({ width: 8, height: 8 }, join([deflateSync(raw(72)), HTML])),
      /corrupt zlib stream, or has data after its end/,
    ],
    [
      "Adam7 sized as if not interlaced",
      pngWith({ width: 8, height: 8, interlace: 1 }, deflateSync(raw(72))),
      /inflates to 72 .* 79|past the 79/,
    ],
  ];
  for (const [what, bytes, reason] of refused) {
    const r = await check(bytes);
    assert(!r.ok, what);
    assertMatch(r.reason, reason, what);
  }
  // The same files with the right amount of data pass.
  assertEquals(await check(pngWith({ width: 8, height: 8 }, deflateSync(raw(72)))), { ok: true });
  assertEquals(
    await check(pngWith({ width: 8, height: 8, interlace: 1 }, deflateSync(raw(79)))),
    { ok: true },
  );
});

/** `jpeg` with its scan data (between the SOS header and EOI) replaced by `scan`. */
function withScan(jpeg: Uint8Array, scan: Uint8Array): Uint8Array {
  let sos = 2;
  while (!(jpeg[sos] === 0xff && jpeg[sos + 1] === 0xda)) {
    sos += 2 + ((jpeg[sos + 2] << 8) | jpeg[sos + 3]);
  }
  const start = sos + 2 + ((jpeg[sos + 2] << 8) | jpeg[sos + 3]);
  return join([jpeg.subarray(0, start), scan, new Uint8Array([0xff, 0xd9])]);
}

const scanOf = (jpeg: Uint8Array) => withScan(jpeg, new Uint8Array(0)).length - 2;

Deno.test("a JPEG whose scan data is garbage, short or padded is refused", async () => {
  const real = encodedJpeg(64, 48);
  const scan = real.subarray(scanOf(real), real.length - 2);
  const refused: [string, Uint8Array][] = [
    ["the issue's garbage scan", withScan(real, HTML)],
    ["garbage scan, many times over", withScan(real, join(Array(40).fill(HTML)))],
    ["scan cut in half", withScan(real, scan.subarray(0, scan.length >> 1))],
    ["real scan with text after it", withScan(real, join([scan, HTML]))],
  ];
  for (const [what, bytes] of refused) {
    const r = await check(bytes);
    assert(!r.ok, what);
    assertMatch(r.reason, /^JPEG does not decode( cleanly: Corrupt JPEG data)?:/, what);
  }
  assertEquals(await check(withScan(real, scan)), { ok: true });
});

Deno.test("a WebP whose bitstream does not decode is refused", async () => {
  const real = await encodedWebp(64, 48);
  const garbled = real.slice();
  const vp8 = new TextDecoder("latin1").decode(real).indexOf("VP8 ");
  const size = new DataView(real.buffer).getUint32(vp8 + 4, true);
  // The VP8 data after its frame header, chunk and RIFF sizes untouched.
  garbled.fill(0x41, vp8 + 8 + 10, vp8 + 8 + size);
  const refused: [string, Uint8Array][] = [
    ["VP8 data replaced by text", garbled],
    ["VP8 key-frame header with no data", makeWebp(16, 16, undefined, "lossy")],
  ];
  for (const [what, bytes] of refused) {
    const r = await check(bytes);
    assert(!r.ok, what);
    assertMatch(r.reason, /WebP does not decode/, what);
  }
});

Deno.test("the pixel bound is checked before any decoding", async () => {
  const r = await decodeImage(encodedJpeg(64, 48), { type: "jpeg", width: 64, height: 48 }, {
    maxWidth: 32,
    maxHeight: 32,
  });
  assertEquals(r, { ok: false, reason: "image is 64x48 pixels; too large" });
});
