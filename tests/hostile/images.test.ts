/**
 * Images are verified as whole images on the running service (item 4 of the hostile-content
 * issue): structure to the end, nothing after it, a configurable pixel bound shown in
 * /v1/pricing, and EXIF GPS (with XMP, text chunks) stripped from what is hosted.
 */
import piexif from "piexifjs";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import {
  httpResponse,
  join,
  makeJpeg,
  makePng,
  makeWebp,
  startServer,
  toBase64,
  writeAll,
} from "../metadata/image/fixtures.ts";
import { verifyImage } from "../../src/metadata/image/verify-image.ts";
import { sniffImage } from "../../src/metadata/image/sniff.ts";

const HTML = new TextEncoder().encode("<html><script>alert(document.domain)</script></html>");
const latin1 = (b: Uint8Array) => Array.from(b, (c) => String.fromCharCode(c)).join("");
const fromLatin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

async function host(h: Harness, apiKey: string, bytes: Uint8Array) {
  const res = await h.request("/v1/metadata", {
    method: "POST",
    headers: bearer(apiKey),
    json: { name: "Picture", symbol: "PIC", imageBase64: toBase64(bytes) },
  });
  return { status: res.status, body: await res.json() };
}

/** A PNG chunk with its CRC, for hand-made files. */
function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  let c = 0xffffffff;
  for (const byte of out.subarray(4, 8 + data.length)) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  view.setUint32(8 + data.length, (c ^ 0xffffffff) >>> 0);
  return out;
}

/** `png` with `chunk` inserted right after IHDR (8 + 25 bytes in). */
const withChunk = (png: Uint8Array, chunk: Uint8Array) =>
  join([png.subarray(0, 33), chunk, png.subarray(33)]);

function jpegWithGps(): Uint8Array {
  const exif = piexif.dump({
    "0th": { [piexif.ImageIFD.Make]: "Camera Maker" },
    GPS: {
      [piexif.GPSIFD.GPSLatitudeRef]: "N",
      [piexif.GPSIFD.GPSLatitude]: [[52, 1], [22, 1], [1234, 100]],
      [piexif.GPSIFD.GPSLongitudeRef]: "E",
      [piexif.GPSIFD.GPSLongitude]: [[4, 1], [53, 1], [5678, 100]],
    },
  });
  return fromLatin1(piexif.insert(exif, latin1(makeJpeg(16, 16))));
}

function webpWithExif(): Uint8Array {
  const base = makeWebp(4, 4, 64); // extended (VP8X) with a padding chunk
  const exif = new TextEncoder().encode("Exif\0\0MM\0*GPS-here");
  const chunk = new Uint8Array(8 + exif.length + (exif.length % 2));
  chunk.set(new TextEncoder().encode("EXIF"), 0);
  new DataView(chunk.buffer).setUint32(4, exif.length, true);
  chunk.set(exif, 8);
  const body = join([base.subarray(12), chunk]);
  const out = join([base.subarray(0, 12), body]);
  new DataView(out.buffer).setUint32(4, 4 + body.length, true);
  out[20] |= 0x08; // VP8X flags: EXIF present
  return out;
}

Deno.test("whole-image checks on POST /v1/metadata: polyglots, truncation, CRCs, bombs", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const png = makePng(4, 4);
    const refused: [string, Uint8Array, RegExp][] = [
      // The cases: a PNG header then HTML and no image data; a valid PNG with HTML after.
      ["PNG header + HTML", join([png.subarray(0, 33), HTML]), /PNG/],
      ["PNG + HTML appended", join([png, HTML]), /follow the image's end \(IEND\)/],
      [
        "PNG with a bad CRC",
        (() => {
          const b = png.slice();
          b[30] ^= 1; // inside IHDR's CRC
          return b;
        })(),
        /CRC/,
      ],
      ["PNG cut before IEND", png.subarray(0, png.length - 12), /IEND/],
      ["PNG without IDAT", join([png.subarray(0, 33), png.subarray(png.length - 12)]), /IDAT/],
      // 16384 x 16384: a few hundred bytes that inflate to 268 MB of pixels.
      ["PNG bomb", makePng(16384, 16384), /16384x16384 pixels; at most 4096x4096/],
      ["JPEG + HTML appended", join([makeJpeg(8, 8), HTML]), /follow the image's end \(EOI\)/],
      ["JPEG without EOI", makeJpeg(8, 8).subarray(0, makeJpeg(8, 8).length - 2), /EOI/],
      ["JPEG of 5000 x 10", makeJpeg(5000, 10), /5000x10 pixels/],
      ["WebP + HTML appended", join([makeWebp(4, 4), HTML]), /follow the image's end/],
      ["WebP shorter than its RIFF size", makeWebp(4, 4, 64).subarray(0, 40), /RIFF size/],
    ];
    for (const [what, bytes, reason] of refused) {
      const r = await host(h, apiKey, bytes);
      assertEquals(r.status, 400, what);
      assertMatch(String(r.body.error.fields.imageBase64), reason, what);
    }
    // Whole images of each type at the bound pass.
    for (const bytes of [makePng(4096, 1), makeJpeg(1, 4096), makeWebp(64, 64)]) {
      const r = await host(h, apiKey, bytes);
      assertEquals(r.status, 201, JSON.stringify(r.body));
    }
  } finally {
    await h.close();
  }
});

Deno.test("a fetched image gets the same checks (imageUrl)", async () => {
  const h = await startHarness({ config: { allowLoopbackImageFetchForTests: true } });
  const body = join([makePng(2, 2), HTML]);
  const server = startServer(async (conn) => {
    await writeAll(
      conn,
      httpResponse(200, { "content-type": "image/png", "content-length": `${body.length}` }, body),
    );
  });
  try {
    const { apiKey } = await h.newApiKey();
    const res = await h.request("/v1/metadata", {
      method: "POST",
      headers: bearer(apiKey),
      json: {
        name: "Fetched",
        symbol: "FET",
        imageUrl: `http://127.0.0.1:${server.port}/polyglot.png`,
      },
    });
    const r = await res.json();
    assertEquals(res.status, 400, JSON.stringify(r));
    assertMatch(String(r.error.fields.imageUrl), /follow the image's end/);
  } finally {
    await server.close();
    await h.close();
  }
});

Deno.test("EXIF GPS, XMP and PNG text are stripped from what is hosted; the rest is kept", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const fetchHosted = async (uri: string) => {
      const res = await h.app.request(uri);
      assertEquals(res.status, 200);
      return new Uint8Array(await res.arrayBuffer());
    };

    // JPEG: the GPS block and an XMP packet go, the camera make stays.
    const xmp = new TextEncoder().encode(
      "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><exif:GPSLatitude>52,22N</exif:GPSLatitude></x:xmpmeta>",
    );
    const gps = jpegWithGps();
    const jpeg = join([
      gps.subarray(0, 2),
      new Uint8Array([0xff, 0xe1, (xmp.length + 2) >> 8, (xmp.length + 2) & 255]),
      xmp,
      gps.subarray(2),
    ]);
    assertEquals(Object.keys(piexif.load(latin1(jpeg)).GPS).length > 0, true);
    const j = await host(h, apiKey, jpeg);
    assertEquals(j.status, 201, JSON.stringify(j.body));
    const hostedJpeg = await fetchHosted(j.body.imageUri);
    const exif = piexif.load(latin1(hostedJpeg));
    assertEquals(exif.GPS, {});
    assertEquals(exif["0th"][piexif.ImageIFD.Make], "Camera Maker");
    assert(!latin1(hostedJpeg).includes("GPSLatitude"), "no XMP left");
    // The hosted bytes are still a whole image, and its id is their hash.
    assertEquals(
      verifyImage(hostedJpeg, sniffImage(hostedJpeg)!, {
        maxWidth: 4096,
        maxHeight: 4096,
      }).ok,
      true,
    );

    // PNG: a text chunk and an eXIf chunk go.
    const png = withChunk(
      withChunk(makePng(3, 3), pngChunk("tEXt", new TextEncoder().encode("Location\0Home"))),
      pngChunk("eXIf", new TextEncoder().encode("MM\0*GPS")),
    );
    const p = await host(h, apiKey, png);
    assertEquals(p.status, 201, JSON.stringify(p.body));
    const hostedPng = await fetchHosted(p.body.imageUri);
    assertEquals(hostedPng, makePng(3, 3));

    // WebP: the EXIF chunk goes and the VP8X flag is cleared; the RIFF size is fixed.
    const webp = webpWithExif();
    assertEquals(verifyImage(webp, sniffImage(webp)!, { maxWidth: 99, maxHeight: 99 }).ok, true);
    const w = await host(h, apiKey, webp);
    assertEquals(w.status, 201, JSON.stringify(w.body));
    const hostedWebp = await fetchHosted(w.body.imageUri);
    assert(!latin1(hostedWebp).includes("EXIF"), "EXIF chunk removed");
    assertEquals(hostedWebp[20] & 0x08, 0);
    assertEquals(new DataView(hostedWebp.buffer).getUint32(4, true) + 8, hostedWebp.length);
  } finally {
    await h.close();
  }
});

Deno.test("the pixel bound is configurable and shown in /v1/pricing beside imageBytes", async () => {
  const h = await startHarness({ env: { IMAGE_MAX_WIDTH: "64", IMAGE_MAX_HEIGHT: "32" } });
  try {
    const limits = (await (await h.request("/v1/pricing")).json()).limits;
    assertEquals(
      [limits.imageBytes, limits.imageMaxWidth, limits.imageMaxHeight],
      [1048576, 64, 32],
    );
    const { apiKey } = await h.newApiKey();
    assertEquals((await host(h, apiKey, makePng(64, 32))).status, 201);
    const wide = await host(h, apiKey, makePng(65, 1));
    assertEquals(wide.status, 400);
    assertMatch(wide.body.error.fields.imageBase64, /at most 64x32/);
    assertEquals((await host(h, apiKey, makeWebp(8, 33))).status, 400);
  } finally {
    await h.close();
  }
});
