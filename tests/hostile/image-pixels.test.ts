/**
 * What we host is what wallets show (issue: images that decode): on the running service, an image
 * whose container is sound but whose pixels are not is a 400 naming the field it came in, and
 * real images of each type, made by library encoders, are hosted as before.
 */
import CRC32 from "crc-32";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import {
  httpResponse,
  join,
  makePng,
  startServer,
  toBase64,
  writeAll,
} from "../metadata/image/fixtures.ts";
import { encodedJpeg, encodedPng, encodedWebp } from "../metadata/image/encoded.ts";

const HTML = new TextEncoder().encode("<html><script>alert(document.domain)</script></html>");

/** An 8x8 PNG whose IDAT chunk holds `data`, every CRC right: the polyglot. */
function pngWithIdat(data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  chunk.set(new TextEncoder().encode("IDAT"), 4);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, CRC32.buf(chunk.subarray(4, 8 + data.length)) >>> 0);
  const png = makePng(8, 8);
  return join([png.subarray(0, 33), chunk, png.subarray(png.length - 12)]);
}

/** A real JPEG whose entropy-coded scan is replaced by text. */
function jpegWithGarbageScan(): Uint8Array {
  const real = encodedJpeg(32, 32);
  let at = 2;
  while (!(real[at] === 0xff && real[at + 1] === 0xda)) {
    at += 2 + ((real[at + 2] << 8) | real[at + 3]);
  }
  const scan = at + 2 + ((real[at + 2] << 8) | real[at + 3]);
  return join([real.subarray(0, scan), join(Array(8).fill(HTML)), new Uint8Array([0xff, 0xd9])]);
}

async function host(
  h: Harness,
  apiKey: string,
  image: { imageBase64?: string; imageUrl?: string },
) {
  const res = await h.request("/v1/metadata", {
    method: "POST",
    headers: bearer(apiKey),
    json: { name: "Picture", symbol: "PIC", ...image },
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("POST /v1/metadata: pixels that do not decode are 400 on imageBase64", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const refused: [string, Uint8Array, RegExp][] = [
      ["8x8 PNG whose IDAT holds <html><script>", pngWithIdat(HTML), /not a zlib stream/],
      ["JPEG with garbage scan data", jpegWithGarbageScan(), /Corrupt JPEG data/],
    ];
    for (const [what, bytes, reason] of refused) {
      const r = await host(h, apiKey, { imageBase64: toBase64(bytes) });
      assertEquals([r.status, r.body.error.code], [400, "invalid_request"], what);
      assertMatch(String(r.body.error.fields.imageBase64), reason, what);
    }
    const real = [
      encodedPng(256, 256, { channels: 4, depth: 8 }),
      encodedPng(100, 60, { channels: 3, depth: 8, interlace: "Adam7" }),
      encodedJpeg(640, 480),
      await encodedWebp(320, 240),
      await encodedWebp(128, 128, { lossless: true, alpha: true }),
    ];
    for (const bytes of real) {
      const r = await host(h, apiKey, { imageBase64: toBase64(bytes) });
      assertEquals(r.status, 201, JSON.stringify(r.body));
    }
  } finally {
    await h.close();
  }
});

Deno.test("POST /v1/metadata: a fetched image that does not decode is 400 on imageUrl", async () => {
  const h = await startHarness({ config: { allowLoopbackImageFetchForTests: true } });
  const body = pngWithIdat(HTML);
  const server = startServer(async (conn) => {
    const head = { "content-type": "image/png", "content-length": `${body.length}` };
    await writeAll(conn, httpResponse(200, head, body));
  });
  try {
    const { apiKey } = await h.newApiKey();
    const r = await host(h, apiKey, { imageUrl: `http://127.0.0.1:${server.port}/logo.png` });
    assertEquals(r.status, 400, JSON.stringify(r.body));
    assertMatch(String(r.body.error.fields.imageUrl), /not a zlib stream/);
  } finally {
    await server.close();
    await h.close();
  }
});
