import assert from "node:assert/strict";
import {
  inspectImage,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_DIMENSION,
  NOT_AN_IMAGE,
  sniffImage,
} from "../../../src/metadata/image/sniff.ts";
import { GIF_1X1, HTML_PAGE, join, makeJpeg, makePng, makeWebp, SVG_IMAGE } from "./fixtures.ts";

function refusal(bytes: Uint8Array): string {
  const result = inspectImage(bytes);
  assert.equal(result.ok, false, "expected a refusal");
  assert.equal(sniffImage(bytes), null);
  return (result as { reason: string }).reason;
}

function segment(marker: number, payload: number[]): number[] {
  const length = payload.length + 2;
  return [0xff, marker, length >> 8, length & 255, ...payload];
}

Deno.test("sniff: PNG type, mime, extension and dimensions", () => {
  assert.deepEqual(sniffImage(makePng(300, 200)), {
    type: "png",
    mime: "image/png",
    ext: "png",
    width: 300,
    height: 200,
  });
});

Deno.test("sniff: JPEG type, mime, extension and dimensions from SOF0", () => {
  assert.deepEqual(sniffImage(makeJpeg(641, 479)), {
    type: "jpeg",
    mime: "image/jpeg",
    ext: "jpg",
    width: 641,
    height: 479,
  });
});

Deno.test("sniff: WebP lossless (VP8L), extended (VP8X) and lossy (VP8) dimensions", () => {
  const expected = { type: "webp", mime: "image/webp", ext: "webp" };
  assert.deepEqual(sniffImage(makeWebp(17, 9)), { ...expected, width: 17, height: 9 });
  assert.deepEqual(sniffImage(makeWebp(640, 480, undefined, "extended")), {
    ...expected,
    width: 640,
    height: 480,
  });
  assert.deepEqual(sniffImage(makeWebp(1023, 767, undefined, "lossy")), {
    ...expected,
    width: 1023,
    height: 767,
  });
});

Deno.test("sniff: JPEG dimensions come from SOF2 (progressive) and SOF15 too", () => {
  for (const marker of [0xc2, 0xcf]) {
    const jpeg = makeJpeg(40, 30);
    const sof = jpeg.findIndex((b, i) => b === 0xff && jpeg[i + 1] === 0xc0);
    jpeg[sof + 1] = marker;
    assert.deepEqual(
      [sniffImage(jpeg)?.width, sniffImage(jpeg)?.height],
      [40, 30],
      marker.toString(16),
    );
  }
});

Deno.test("sniff: JPEG DHT, JPG and DAC segments are skipped, not read as frame headers", () => {
  // Each decoy segment carries bytes that would read as 4660x22136 if taken for a SOF.
  const decoy = [0x08, 0x12, 0x34, 0x56, 0x78, 0x01, 0x01, 0x11, 0x00];
  const bytes = new Uint8Array([
    0xff,
    0xd8,
    ...segment(0xc4, decoy),
    ...segment(0xc8, decoy),
    ...segment(0xcc, decoy),
    ...segment(0xc0, [8, 0, 25, 0, 50, 1, 1, 0x11, 0]),
    0xff,
    0xd9,
  ]);
  assert.deepEqual([sniffImage(bytes)?.width, sniffImage(bytes)?.height], [50, 25]);
});

Deno.test("sniff: JPEG fill bytes before a marker are allowed", () => {
  const plain = makeJpeg(20, 10);
  const padded = makeJpeg(20, 10, plain.length + 3);
  assert.equal(padded.length, plain.length + 3);
  assert.deepEqual([sniffImage(padded)?.width, sniffImage(padded)?.height], [20, 10]);
});

Deno.test("sniff: JPEG without a readable frame header is refused", () => {
  const jpeg = makeJpeg(20, 10);
  const sof = jpeg.findIndex((b, i) => b === 0xff && jpeg[i + 1] === 0xc0);
  assert.equal(refusal(jpeg.subarray(0, sof + 5)), "JPEG image dimensions could not be read");
  // A scan before any frame header: no dimensions exist.
  const scanFirst = new Uint8Array([0xff, 0xd8, ...segment(0xda, [1, 1, 0, 0, 63, 0]), 0, 0]);
  assert.equal(refusal(scanFirst), "JPEG image dimensions could not be read");
  // Garbage where a marker should be.
  assert.equal(
    refusal(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 4, 1, 2, 0x12])),
    "JPEG image dimensions could not be read",
  );
  // A segment length that runs past the end.
  assert.equal(
    refusal(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0])),
    "JPEG image dimensions could not be read",
  );
});

Deno.test("sniff: truncated PNG and WebP headers are refused", () => {
  assert.equal(refusal(makePng(4, 4).subarray(0, 20)), "PNG image dimensions could not be read");
  const badIhdr = makePng(4, 4);
  badIhdr[11] = 14; // IHDR length must be 13
  assert.equal(refusal(badIhdr), "PNG image dimensions could not be read");
  assert.equal(refusal(makeWebp(4, 4).subarray(0, 22)), "WebP image dimensions could not be read");
  const badVersion = makeWebp(4, 4);
  badVersion[24] |= 0x20; // VP8L version bits must be 0
  assert.equal(refusal(badVersion), "WebP image dimensions could not be read");
  const notKeyFrame = makeWebp(4, 4, undefined, "lossy");
  notKeyFrame[20] |= 1;
  assert.equal(refusal(notKeyFrame), "WebP image dimensions could not be read");
});

Deno.test("sniff: GIF, HTML, SVG, RIFF/WAVE, empty and random bytes are not images", () => {
  const wav = new TextEncoder().encode("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00");
  const random = crypto.getRandomValues(new Uint8Array(64));
  random[0] = 0x00;
  for (const bytes of [GIF_1X1, HTML_PAGE, SVG_IMAGE, wav, new Uint8Array(0), random]) {
    assert.equal(refusal(bytes), NOT_AN_IMAGE);
  }
  assert.equal(NOT_AN_IMAGE, "not a PNG, JPEG or WebP image");
});

Deno.test("sniff: the magic number decides, not what follows or any declared type", () => {
  // HTML that merely mentions PNG, and a PNG signature hidden after a BOM.
  const disguised = join([new Uint8Array([0xef, 0xbb, 0xbf]), makePng(2, 2)]);
  assert.equal(refusal(disguised), NOT_AN_IMAGE);
  // A real PNG with trailing HTML is still a PNG (polyglots are the storage layer's concern).
  assert.equal(sniffImage(join([makePng(2, 2), HTML_PAGE]))?.type, "png");
});

Deno.test("sniff: zero and oversized dimensions are refused with a reason", () => {
  assert.equal(refusal(makePng(0, 10)), "image dimensions 0x10 are invalid");
  assert.equal(refusal(makeJpeg(10, 0)), "image dimensions 10x0 are invalid");
  assert.equal(
    refusal(makePng(MAX_IMAGE_DIMENSION + 1, 1)),
    "image dimensions 16385x1 exceed 16384 pixels per side",
  );
  assert.equal(
    refusal(makeJpeg(8, MAX_IMAGE_DIMENSION + 1)),
    "image dimensions 8x16385 exceed 16384 pixels per side",
  );
  assert.equal(
    refusal(makeWebp(20000, 20000, undefined, "extended")),
    "image dimensions 20000x20000 exceed 16384 pixels per side",
  );
  assert.equal(
    refusal(makeWebp(1 << 24, 1, undefined, "extended")),
    "image dimensions 16777216x1 exceed 16384 pixels per side",
  );
  // Width near 2^32 must not wrap around to something small or negative.
  const huge = makePng(1, 1);
  huge.set([0xff, 0xff, 0xff, 0xff], 16);
  assert.equal(refusal(huge), "image dimensions 4294967295x1 exceed 16384 pixels per side");
});

Deno.test("sniff: 16384 pixels per side is the largest accepted", () => {
  assert.equal(sniffImage(makePng(MAX_IMAGE_DIMENSION, 1))?.width, 16384);
  assert.equal(sniffImage(makeJpeg(1, MAX_IMAGE_DIMENSION))?.height, 16384);
  assert.equal(sniffImage(makeWebp(MAX_IMAGE_DIMENSION, MAX_IMAGE_DIMENSION))?.width, 16384);
});

Deno.test("fixtures: images can be made at an exact byte size, including exactly 1 MiB", () => {
  for (const make of [makePng, makeJpeg, makeWebp]) {
    const image = make(64, 48, MAX_IMAGE_BYTES);
    assert.equal(image.length, 1_048_576, make.name);
    assert.deepEqual([sniffImage(image)?.width, sniffImage(image)?.height], [64, 48], make.name);
  }
  assert.equal(makePng(1, 1, 500).length, 500);
  assert.equal(makeJpeg(1, 1, 1000).length, 1000);
  assert.equal(makeWebp(1, 1, 1000).length, 1000);
  assert.equal(makeJpeg(1, 1, MAX_IMAGE_BYTES + 1).length, MAX_IMAGE_BYTES + 1);
  assert.throws(() => makeWebp(1, 1, 1001), RangeError);
  assert.throws(() => makePng(1, 1, makePng(1, 1).length + 5), RangeError);
});
