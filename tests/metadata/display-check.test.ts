/**
 * POST /v1/metadata/check against a local document server behind the fetcher's test seam
 * (loopback http allowed by allowLoopbackImageFetchForTests): one case per problem code, our own
 * hosted URIs answered from the store without a connection, keyed and counted, and the answer
 * kept for a build to find (`recentCheck`).
 */
import CRC32 from "crc-32";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import {
  GIF_1X1,
  httpResponse,
  join,
  makePng,
  startServer,
  SVG_IMAGE,
  toBase64,
  writeAll,
} from "./image/fixtures.ts";
import { encodedPng } from "./image/encoded.ts";
import { CHECK_KEPT_MS, recentCheck } from "../../src/metadata/display-check.ts";
import { DisplayCheck } from "../../src/metadata/display-check-schema.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const CORS = { "access-control-allow-origin": "*" };

/** The polyglot: an 8x8 PNG whose IDAT holds HTML, every CRC right. */
function brokenPng(): Uint8Array {
  const html = enc("<html><script>alert(1)</script></html>");
  const chunk = new Uint8Array(12 + html.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, html.length);
  chunk.set(enc("IDAT"), 4);
  chunk.set(html, 8);
  view.setUint32(8 + html.length, CRC32.buf(chunk.subarray(4, 8 + html.length)) >>> 0);
  const png = makePng(8, 8);
  return join([png.subarray(0, 33), chunk, png.subarray(png.length - 12)]);
}

type Reply = { status?: number; headers?: Record<string, string>; body: Uint8Array };

/** A server answering each path from `files`, 404 for the rest. */
function documentServer(files: (base: string) => Record<string, Reply>) {
  let routes: Record<string, Reply> = {};
  const server = startServer(async (conn, request) => {
    const path = request.split(" ")[1];
    const r = routes[path] ?? { status: 404, body: enc("no") };
    const headers = { "content-length": `${r.body.length}`, ...r.headers };
    await writeAll(conn, httpResponse(r.status ?? 200, headers, r.body));
  });
  const base = `http://127.0.0.1:${server.port}`;
  routes = files(base);
  return { server, base };
}

const doc = (fields: Record<string, unknown>) => enc(JSON.stringify(fields));

async function check(h: Harness, apiKey: string, body: Record<string, unknown>) {
  const res = await h.request("/v1/metadata/check", {
    method: "POST",
    headers: bearer(apiKey),
    json: body,
  });
  const json = await res.json();
  return { status: res.status, body: json, headers: res.headers };
}

const codes = (r: { body: { problems: { code: string }[] } }) =>
  r.body.problems.map((p) => p.code).filter((c) => c !== "not_https");

Deno.test("POST /v1/metadata/check: each problem code, against a local document server", async () => {
  const h = await startHarness({ config: { allowLoopbackImageFetchForTests: true } });
  const png = encodedPng(64, 64, { channels: 4, depth: 8 });
  const { server, base } = documentServer((base) => {
    const withImage = (image: string, extra: Record<string, string> = CORS) => ({
      headers: extra,
      body: doc({ name: "Good", symbol: "GOOD", description: "d", image: `${base}${image}` }),
    });
    return {
      "/good.json": withImage("/logo.png"),
      "/gif.json": withImage("/logo.gif"),
      "/nocors.json": withImage("/logo.png", {}),
      "/onecors.json": withImage("/logo.png", {
        "access-control-allow-origin": "https://a.example",
      }),
      "/wide.json": withImage("/wide.png"),
      "/html.json": { headers: CORS, body: enc("<html>not json</html>") },
      "/array.json": { headers: CORS, body: enc("[1,2]") },
      "/noimage.json": { headers: CORS, body: doc({ name: "Good", symbol: "GOOD" }) },
      "/gone.json": withImage("/gone.png"),
      "/svg.json": withImage("/logo.svg"),
      "/huge.json": withImage("/huge.png"),
      "/broken.json": withImage("/broken.png"),
      "/logo.png": { body: png },
      "/logo.gif": { body: GIF_1X1 },
      "/wide.png": { body: makePng(5000, 1) },
      "/logo.svg": { body: SVG_IMAGE },
      "/huge.png": { body: join([makePng(8, 8), new Uint8Array(2 * 1024 * 1024)]) },
      "/broken.png": { body: brokenPng() },
    };
  });
  try {
    const { apiKey } = await h.newApiKey();
    const good = await check(h, apiKey, {
      metadataUri: `${base}/good.json`,
      name: "Good",
      symbol: "GOOD",
    });
    assertEquals(good.status, 200, JSON.stringify(good.body));
    DisplayCheck.parse(good.body);
    assertEquals(codes(good), []);
    assertEquals(good.body.document, {
      name: "Good",
      symbol: "GOOD",
      description: "d",
      image: `${base}/logo.png`,
    });
    assertEquals(good.body.image, {
      uri: `${base}/logo.png`,
      type: "png",
      bytes: png.length,
      width: 64,
      height: 64,
    });
    assertEquals(good.body.hosted, false);
    // Over http, the one problem left is the scheme itself.
    assertEquals(good.body.problems.map((p: { code: string }) => p.code), ["not_https"]);
    assert(server.requests.some((r) => /origin: https:\/\/explorer\.solana\.com/i.test(r)));

    const gif = await check(h, apiKey, { metadataUri: `${base}/gif.json` });
    assertEquals([codes(gif), gif.body.image.type, gif.body.image.width], [[], "gif", 1]);

    const cases: [string, Record<string, unknown>, string[], RegExp][] = [
      ["/missing.json", {}, ["unreachable"], /HTTP 404/],
      ["/html.json", {}, ["not_json"], /not JSON/],
      ["/array.json", {}, ["not_json"], /not an object/],
      ["/nocors.json", {}, ["no_cors"], /Access-Control-Allow-Origin/],
      ["/onecors.json", {}, ["no_cors"], /allows only the origin https:\/\/a\.example/],
      ["/noimage.json", {}, ["no_image"], /no `image`/],
      ["/wide.json", {}, ["image_too_large"], /5000x1 pixels; .* 4096x4096/],
      ["/good.json", { name: "Other" }, ["name_mismatch"], /"Good", not "Other"/],
      ["/good.json", { symbol: "OTHR" }, ["symbol_mismatch"], /"GOOD", not "OTHR"/],
      ["/gone.json", {}, ["image_unreachable"], /HTTP 404/],
      ["/svg.json", {}, ["image_unsupported"], /an SVG, not PNG, JPEG, WebP or GIF/],
      ["/huge.json", {}, ["image_too_large"], /larger than 1048576 bytes/],
      ["/broken.json", {}, ["image_undecodable"], /not a zlib stream/],
    ];
    for (const [path, extra, expected, message] of cases) {
      const r = await check(h, apiKey, { metadataUri: `${base}${path}`, ...extra });
      assertEquals(r.status, 200, path);
      DisplayCheck.parse(r.body);
      assertEquals(codes(r), expected, path);
      assertEquals(r.body.ok, false, path);
      const p = r.body.problems.find((p: { code: string }) => p.code === expected[0]);
      assertMatch(p.message, message, path);
    }
  } finally {
    await server.close();
    await h.close();
  }
});

Deno.test("not https is refused before any connection; a bad URI or no key is refused", async () => {
  const h = await startHarness();
  const { server, base } = documentServer(() => ({}));
  try {
    const { apiKey } = await h.newApiKey();
    const r = await check(h, apiKey, { metadataUri: `${base}/good.json` });
    assertEquals(r.body.problems.map((p: { code: string }) => p.code), [
      "not_https",
      "unreachable",
    ]);
    assertEquals(server.accepted, 0);
    const bad = await check(h, apiKey, { metadataUri: "not a url", extra: 1 });
    assertEquals(bad.status, 400);
    assertEquals(Object.keys(bad.body.error.fields).sort(), ["extra", "metadataUri"]);
    // The other bodies' words, not zod's ("Invalid input: expected string, received undefined").
    const worded = await check(h, apiKey, { name: "x".repeat(201), symbol: 7 });
    assertEquals(worded.body.error.fields, {
      metadataUri: "required",
      name: "at most 200 characters",
      symbol: "must be a string",
    });
    const long = await check(h, apiKey, { metadataUri: `https://e.com/${"a".repeat(2048)}` });
    assertEquals(long.body.error.fields, { metadataUri: "at most 2048 characters" });
    const res = await h.request("/v1/metadata/check", {
      method: "POST",
      json: { metadataUri: "https://example.com/m.json" },
    });
    assertEquals(res.status, 401);
    await res.body?.cancel();
    // Keyed calls count against the hourly limit like the others.
    const before = Number(r.headers.get("RateLimit-Remaining"));
    const after = Number(bad.headers.get("RateLimit-Remaining"));
    assertEquals(after, before - 1);
  } finally {
    await server.close();
    await h.close();
  }
});

Deno.test("our own hosted URI is answered from the store, without a fetch", async () => {
  let now = Date.UTC(2026, 0, 10, 12);
  const h = await startHarness({
    clock: () => now,
    env: { PUBLIC_BASE_URL: "https://tokens.example.com" },
  });
  try {
    const { apiKey } = await h.newApiKey();
    const png = encodedPng(48, 32, { channels: 3, depth: 8 });
    const res = await h.request("/v1/metadata", {
      method: "POST",
      headers: bearer(apiKey),
      json: { name: "Hosted", symbol: "HST", imageBase64: toBase64(png) },
    });
    const hosted = await res.json();
    assertEquals(res.status, 201, JSON.stringify(hosted));
    const r = await check(h, apiKey, { metadataUri: hosted.metadataUri, name: "Hosted" });
    assertEquals(r.status, 200, JSON.stringify(r.body));
    // tokens.example.com cannot be reached from here: a clean answer came from the store.
    assertEquals([r.body.hosted, r.body.ok, r.body.problems], [true, true, []]);
    assertEquals(r.body.image, {
      uri: hosted.imageUri,
      type: "png",
      bytes: png.length,
      width: 48,
      height: 32,
    });
    const other = await check(h, apiKey, { metadataUri: hosted.metadataUri, symbol: "NOPE" });
    assertEquals(other.body.problems.map((p: { code: string }) => p.code), ["symbol_mismatch"]);

    // The build can find the last check of the same URI for a few minutes, and only then.
    const kept = await recentCheck(h.kv, hosted.metadataUri, now);
    assertEquals(kept, other.body);
    assertEquals(await recentCheck(h.kv, `${hosted.metadataUri}?x`, now), null);
    now += CHECK_KEPT_MS + 1;
    assertEquals(await recentCheck(h.kv, hosted.metadataUri, now), null);
  } finally {
    await h.close();
  }
});

Deno.test("a build on an external URI carries the check made for it minutes before; one never checked carries none", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    // Nothing answers at this host here: the check records "unreachable", which the build shows.
    const uri = "https://unreachable.invalid/m/token.json";
    const checked = await check(h, apiKey, { metadataUri: uri, name: "Checked" });
    assertEquals(checked.status, 200);
    const build = (metadataUri: string) =>
      h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(apiKey),
        json: {
          payer: wallet.publicKey.toBase58(),
          name: "Checked",
          symbol: "CHK",
          metadataUri,
          supply: "1000",
        },
      });
    const res = await build(uri);
    const body = await res.json();
    assertEquals(res.status, 201, JSON.stringify(body));
    assertEquals(body.displayCheck, checked.body);
    assert(body.displayCheck.problems.some((p: { code: string }) => p.code === "unreachable"));
    const other = await (await build("https://unreachable.invalid/m/other.json")).json();
    assertEquals(other.displayCheck, undefined);
  } finally {
    await h.close();
  }
});
