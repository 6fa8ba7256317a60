import assert from "node:assert/strict";
import { decodeBase64, decodeBase64Image } from "../../../src/metadata/image/decode-base64.ts";
import { HTML_PAGE, makeJpeg, makePng, makeWebp, SVG_IMAGE, toBase64 } from "./fixtures.ts";

const MIB = 1_048_576;

function reasonOf(result: { ok: true } | { ok: false; reason: string }): string {
  assert.equal(result.ok, false, "expected a refusal");
  return result.ok ? "" : result.reason;
}

Deno.test("base64: raw base64 decodes to the exact bytes and is sniffed", () => {
  const png = makePng(5, 7);
  const result = decodeBase64Image(toBase64(png));
  assert.ok(result.ok);
  assert.deepEqual(result.bytes, png);
  assert.deepEqual([result.image.type, result.image.width, result.image.height], ["png", 5, 7]);
});

Deno.test("base64: data: URL prefix is stripped and its declared type ignored", () => {
  const jpeg = makeJpeg(9, 4);
  const asPng = decodeBase64Image(`data:image/png;base64,${toBase64(jpeg)}`);
  assert.ok(asPng.ok);
  assert.equal(asPng.image.type, "jpeg", "the bytes decide, not the declared MIME type");
  assert.deepEqual(asPng.bytes, jpeg);

  const webp = makeWebp(3, 3);
  const upper = decodeBase64Image(`DATA:IMAGE/WEBP;name=x.webp;BASE64,${toBase64(webp)}`);
  assert.ok(upper.ok);
  assert.equal(upper.image.type, "webp");

  const html = decodeBase64Image(`data:image/png;base64,${toBase64(HTML_PAGE)}`);
  assert.equal(reasonOf(html), "not a PNG, JPEG or WebP image");
  assert.equal(
    reasonOf(decodeBase64Image(`data:image/svg+xml;base64,${toBase64(SVG_IMAGE)}`)),
    "not a PNG, JPEG or WebP image",
  );
});

Deno.test("base64: malformed data: URLs are refused", () => {
  const b64 = toBase64(makePng(1, 1));
  const expected = "data URL must be of the form data:<type>;base64,<data>";
  assert.equal(reasonOf(decodeBase64(`data:image/png,${b64}`)), expected);
  assert.equal(reasonOf(decodeBase64(`data:image/png;base64${b64}`)), expected);
  assert.equal(reasonOf(decodeBase64(`data:image png;base64,${b64}`)), expected);
  assert.equal(reasonOf(decodeBase64(`data:${"x".repeat(300)};base64,${b64}`)), expected);
});

Deno.test("base64: padding is required (RFC 4648) and must be correct", () => {
  const bytes = new Uint8Array([1, 2, 3, 4]); // "AQIDBA=="
  assert.deepEqual((decodeBase64("AQIDBA==") as { bytes: Uint8Array }).bytes, bytes);
  assert.deepEqual((decodeBase64("AQID") as { bytes: Uint8Array }).bytes, bytes.subarray(0, 3));
  const missing =
    "image is not valid base64 (padding required: the text must be whole groups of 4, ending in = or ==)";
  // A last group of 2 or 3 digits without its "==" or "=", bare or after a data: prefix.
  for (const bare of ["AQIDBA", "AQIDBAU", "QQ", "data:image/png;base64,AQIDBA"]) {
    assert.equal(reasonOf(decodeBase64(bare)), missing, bare);
  }
  const padded = decodeBase64("data:image/png;base64,AQIDBA==");
  assert.ok(padded.ok);
  assert.deepEqual(padded.bytes, bytes);
  for (const bad of ["AQIDBA=", "AQIDBA===", "AQIDB", "AQ=DBA==", "=", "AQIDBA==AQ==", "AQID=="]) {
    assert.match(reasonOf(decodeBase64(bad)), /^image is not valid base64/, bad);
  }
});

Deno.test("base64: characters outside the standard alphabet are refused", () => {
  const reason = "image is not valid base64 (only A-Z, a-z, 0-9, + and / are allowed)";
  for (
    const bad of [
      "AQ-D",
      "AQ_D",
      "AQ D",
      "AQ\nD",
      "AQ\tD",
      " AQID",
      "AQID\r\n",
      "AQ*D",
      "AQ%D",
      "AQÀD",
    ]
  ) {
    assert.equal(reasonOf(decodeBase64(bad)), reason, JSON.stringify(bad));
  }
  assert.equal(reasonOf(decodeBase64("")), "image is empty");
  assert.equal(reasonOf(decodeBase64("data:image/png;base64,")), "image is empty");
});

Deno.test("base64: non-zero trailing bits are refused so each image has one encoding", () => {
  assert.ok(decodeBase64("QQ==").ok); // "A"
  assert.equal(
    reasonOf(decodeBase64("QR==")),
    "image is not valid base64 (non-zero trailing bits)",
  );
  assert.ok(decodeBase64("QUE=").ok); // "AA"
  assert.equal(
    reasonOf(decodeBase64("QUF=")),
    "image is not valid base64 (non-zero trailing bits)",
  );
});

Deno.test("base64: exactly 1 MiB decoded is accepted, with and without data: prefix", () => {
  const png = makePng(256, 256, MIB);
  const b64 = toBase64(png);
  for (const input of [b64, `data:image/png;base64,${b64}`]) {
    const result = decodeBase64Image(input);
    assert.ok(result.ok, result.ok ? "" : result.reason);
    assert.equal(result.bytes.length, MIB);
    assert.deepEqual(result.bytes, png);
  }
  // The same text without its padding is refused (1 MiB is not a multiple of 3 bytes).
  assert.match(reasonOf(decodeBase64Image(b64.replace(/=+$/, ""))), /padding required/);
});

Deno.test("base64: 1 MiB + 1 byte is refused, with and without data: prefix", () => {
  const jpeg = makeJpeg(64, 64, MIB + 1);
  const b64 = toBase64(jpeg);
  for (const input of [b64, b64.replace(/=+$/, ""), `data:image/jpeg;base64,${b64}`]) {
    assert.equal(reasonOf(decodeBase64Image(input)), "image larger than 1048576 bytes");
  }
});

Deno.test("base64: a 100 MB string is refused from its length, without decoding", () => {
  const huge = "A".repeat(100 * 1024 * 1024);
  const result = decodeBase64(huge);
  assert.equal(reasonOf(result), "image larger than 1048576 bytes");
  // Invalid characters do not matter when the length alone is disqualifying: nothing is decoded
  // (a decode would have refused the characters instead). No timing: it depends on the machine.
  assert.equal(
    reasonOf(decodeBase64(`data:image/png;base64,${"!".repeat(2_000_000)}`)),
    "image larger than 1048576 bytes",
  );
});

Deno.test("base64: maxBytes can be lowered", () => {
  const png = makePng(1, 1, 1000);
  assert.ok(decodeBase64Image(toBase64(png), { maxBytes: 1000 }).ok);
  assert.equal(
    reasonOf(decodeBase64Image(toBase64(png), { maxBytes: 999 })),
    "image larger than 999 bytes",
  );
});

Deno.test("base64: insane dimensions are refused after decoding", () => {
  assert.equal(
    reasonOf(decodeBase64Image(toBase64(makePng(16385, 1)))),
    "image dimensions 16385x1 exceed 16384 pixels per side",
  );
});
