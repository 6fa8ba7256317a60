/**
 * POST /v1/metadata and the hosted files through the whole service, with the production image
 * fetch policy (the loopback switch off).
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { midHourHarness } from "../support/mid-hour-clock.ts";
import { sha256Hex } from "../../src/kernel/hashing.ts";
import type { MetadataHosted } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { encodedWebp } from "./image/encoded.ts";
import {
  GIF_1X1,
  HTML_PAGE,
  httpResponse,
  makeJpeg,
  makePng,
  makeWebp,
  startServer,
  SVG_IMAGE,
  toBase64,
  writeAll,
} from "./image/fixtures.ts";

const MiB = 1_048_576;

// deno-lint-ignore no-explicit-any
type Post = { status: number; body: Record<string, any>; res: Response };

async function post(
  h: Harness,
  apiKey: string,
  json: unknown,
  headers: Record<string, string> = {},
): Promise<Post> {
  const res = await h.request("/v1/metadata", {
    method: "POST",
    headers: { ...bearer(apiKey), ...headers },
    json,
  });
  return { status: res.status, body: await res.json(), res };
}

const path = (uri: string) => new URL(uri).pathname;

async function countBlobs(h: Harness, imageId: string) {
  let n = 0;
  for await (const _ of h.kv.list({ prefix: ["blob", imageId] })) n++;
  return n;
}

async function usedToday(h: Harness, apiKey: string): Promise<number> {
  const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
  return me.usageToday.metadata;
}

async function storedEvent(h: Harness, id: string): Promise<MetadataHosted> {
  const events = await h.services.store.readStream(`metadata-${id}`);
  assertEquals(events.length, 1);
  return events[0] as unknown as MetadataHosted;
}

Deno.test("POST /v1/metadata and the hosted files", async (t) => {
  // Mid-hour: the steps compare today's usage before and after, on one day.
  const h = await startHarness(midHourHarness());
  try {
    const { apiKey } = await h.newApiKey();
    const meta = { name: "Test Token", symbol: "TST" };

    await t.step(
      "201 with stable URLs; the served JSON and image are byte-identical to what was stored",
      async () => {
        const png = makePng(3, 2);
        const r = await post(h, apiKey, {
          ...meta,
          description: "A test",
          imageBase64: toBase64(png),
          website: "https://example.com",
          twitter: "https://x.com/tst",
          attributes: [{ trait_type: "tier", value: 1 }],
        });
        assertEquals(r.status, 201, JSON.stringify(r.body));
        assertEquals(Object.keys(r.body).sort(), ["id", "imageUri", "metadataUri"]);
        assertMatch(r.body.id, /^[0-9a-f]{32}$/);
        const imageId = await sha256Hex(png);
        assertEquals(r.body.metadataUri, `${h.services.config.publicBaseUrl}/m/${r.body.id}.json`);
        assertEquals(r.body.imageUri, `${h.services.config.publicBaseUrl}/i/${imageId}.png`);

        const event = await storedEvent(h, r.body.id);
        const doc = await h.request(path(r.body.metadataUri));
        assertEquals(doc.status, 200);
        assertEquals(await doc.text(), event.data.json);
        assertEquals(JSON.parse(event.data.json), {
          name: "Test Token",
          symbol: "TST",
          description: "A test",
          image: r.body.imageUri,
          external_url: "https://example.com/",
          attributes: [{ trait_type: "tier", value: 1 }],
          properties: { files: [{ uri: r.body.imageUri, type: "image/png" }], category: "image" },
          extensions: { website: "https://example.com/", twitter: "https://x.com/tst" },
        });

        const img = await h.request(path(r.body.imageUri));
        assertEquals(img.status, 200);
        assertEquals(new Uint8Array(await img.arrayBuffer()), png);
        assertEquals(event.data.imageBytes, png.length);
      },
    );

    await t.step(
      "every format is decided by its bytes; a non-image and absurd dimensions are 400 on imageBase64",
      async () => {
        const cases: [Uint8Array, string, string][] = [
          [makePng(4, 4), "png", "image/png"],
          [makeJpeg(16, 8), "jpg", "image/jpeg"],
          [makeWebp(4, 4), "webp", "image/webp"],
          [makeWebp(4, 4, undefined, "extended"), "webp", "image/webp"],
          // A real lossy WebP: a VP8 header alone has no pixels and is refused since pixel
          // data is decoded (tests/metadata/image/decode-image.test.ts).
          [await encodedWebp(16, 16), "webp", "image/webp"],
        ];
        for (const [bytes, ext, mime] of cases) {
          // The declared type lies on purpose: only the bytes count.
          const r = await post(h, apiKey, {
            ...meta,
            imageBase64: `data:image/gif;base64,${toBase64(bytes)}`,
          });
          assertEquals(r.status, 201, JSON.stringify(r.body));
          assert(r.body.imageUri.endsWith(`.${ext}`), r.body.imageUri);
          const img = await h.request(path(r.body.imageUri));
          assertEquals(img.headers.get("content-type"), mime);
          assertEquals(new Uint8Array(await img.arrayBuffer()), bytes);
        }
        for (const bytes of [GIF_1X1, HTML_PAGE, SVG_IMAGE, makePng(20_000, 10)]) {
          const r = await post(h, apiKey, { ...meta, imageBase64: toBase64(bytes) });
          assertEquals(r.status, 400);
          assertEquals(r.body.error.code, "invalid_request");
          assertEquals(Object.keys(r.body.error.fields), ["imageBase64"]);
        }
        const notB64 = await post(h, apiKey, { ...meta, imageBase64: "@@@@" });
        assertEquals([notB64.status, Object.keys(notB64.body.error.fields)], [400, [
          "imageBase64",
        ]]);
      },
    );

    await t.step("base64 with and without the data: prefix host the same image", async () => {
      const jpg = makeJpeg(8, 8);
      const plain = await post(h, apiKey, { ...meta, imageBase64: toBase64(jpg) });
      const prefixed = await post(h, apiKey, {
        ...meta,
        imageBase64: `data:image/jpeg;base64,${toBase64(jpg)}`,
      });
      assertEquals([plain.status, prefixed.status], [201, 201]);
      assertEquals(plain.body.imageUri, prefixed.body.imageUri);
      assert(plain.body.id !== prefixed.body.id);
    });

    await t.step(
      "1 MiB exactly is hosted (in 18 chunks, once however often it is sent); 1 MiB + 1 is refused",
      async () => {
        const exact = makePng(16, 16, MiB);
        const imageId = await sha256Hex(exact);
        const first = await post(h, apiKey, { ...meta, imageBase64: toBase64(exact) });
        assertEquals(first.status, 201, JSON.stringify(first.body));
        const second = await post(h, apiKey, {
          ...meta,
          name: "Other",
          imageBase64: toBase64(exact),
        });
        assertEquals(second.status, 201);
        assertEquals(second.body.imageUri, first.body.imageUri);
        assertEquals(await countBlobs(h, imageId), 18);
        assertEquals((await storedEvent(h, first.body.id)).data.newImage, true);
        assertEquals((await storedEvent(h, second.body.id)).data.newImage, false);
        const img = await h.request(path(first.body.imageUri));
        assertEquals(img.headers.get("content-length"), String(MiB));
        assertEquals(new Uint8Array(await img.arrayBuffer()), exact);

        const over = await post(h, apiKey, {
          ...meta,
          imageBase64: toBase64(makePng(16, 16, MiB + 1)),
        });
        assertEquals(over.status, 400);
        assertEquals(Object.keys(over.body.error.fields), ["imageBase64"]);
        assertMatch(over.body.error.fields.imageBase64, /larger than 1048576/);
      },
    );

    await t.step(
      "every bad field is named; unknown members and both image members are 400",
      async () => {
        const r = await post(h, apiKey, {
          name: "x".repeat(33),
          symbol: "A B",
          imageUrl: "https://example.com/a.png",
          imageBase64: toBase64(makePng(1, 1)),
          telegram: "https://telegram.org/x",
          extra: true,
        });
        assertEquals(r.status, 400);
        assertEquals(r.body.error.code, "invalid_request");
        assertEquals(Object.keys(r.body.error.fields).sort(), [
          "extra",
          "imageBase64",
          "imageUrl",
          "name",
          "symbol",
          "telegram",
        ]);
        const neither = await post(h, apiKey, meta);
        assertEquals(Object.keys(neither.body.error.fields).sort(), ["imageBase64", "imageUrl"]);
      },
    );

    await t.step(
      "a name no build could carry (11 characters, 33 bytes) is 400 on name, not hosted or counted",
      async () => {
        const before = await usedToday(h, apiKey);
        const r = await post(h, apiKey, {
          ...meta,
          name: "€".repeat(11),
          imageBase64: toBase64(makePng(1, 1)),
        });
        assertEquals(r.status, 400);
        assertEquals(Object.keys(r.body.error.fields), ["name"]);
        assertMatch(r.body.error.fields.name, /^at most 32 bytes of UTF-8 \(got 33\)/);
        assertEquals(await usedToday(h, apiKey), before);
      },
    );

    await t.step(
      "imageUrl at a refused address class is 400 on imageUrl, counted; a URL that is no https URL is not",
      async () => {
        const server = startServer(async (conn) => {
          await writeAll(conn, httpResponse(200, { "content-length": "67" }, makePng(1, 1)));
        });
        const before = await usedToday(h, apiKey);
        try {
          const urls = [
            "https://127.0.0.1/a.png", // loopback
            `http://127.0.0.1:${server.port}/a.png`, // a live local server
            "https://[::1]/a.png",
            "https://localhost/a.png",
            "https://2130706433/a.png", // decimal 127.0.0.1
            "https://0x7f.1/a.png", // hex 127.0.0.1
            "https://10.1.2.3/a.png", // 10/8
            "https://172.16.0.1/a.png",
            "https://192.168.1.1/a.png",
            "https://100.64.0.1/a.png", // CGNAT
            "https://169.254.169.254/latest/meta-data/", // cloud metadata
            "https://[fe80::1]/a.png",
            "https://[fd00::1]/a.png",
            "https://[::ffff:127.0.0.1]/a.png", // IPv4-mapped IPv6
            "https://[::ffff:a9fe:a9fe]/a.png", // mapped 169.254.169.254
            "https://0.0.0.0/a.png",
            "https://224.0.0.1/a.png", // multicast
            "http://93.184.215.14/a.png", // public, but not https
            "https://user:pw@93.184.215.14/a.png", // credentials
          ];
          for (const imageUrl of urls) {
            const r = await post(h, apiKey, { ...meta, imageUrl });
            assertEquals(r.status, 400, imageUrl);
            assertEquals(r.body.error.code, "invalid_request");
            assertEquals(Object.keys(r.body.error.fields), ["imageUrl"], imageUrl);
            assertEquals(typeof r.body.error.fields.imageUrl, "string");
          }
          assertEquals(server.accepted, 0);
          // A well-formed https URL is accepted for processing (design.md: then it counts), even
          // when the address policy refuses it; a URL that is not one is bad input and does not.
          const accepted = urls.filter((u) => u.startsWith("https://") && !u.includes("@"));
          assertEquals(await usedToday(h, apiKey), before + accepted.length);
        } finally {
          await server.close();
        }
      },
    );

    await t.step(
      "a counted image failure is an event that replay folds; its 400 replays under the same key",
      async () => {
        const before = await usedToday(h, apiKey);
        const body = { ...meta, imageUrl: "https://10.9.8.7/a.png" };
        const headers = { "idempotency-key": "meta-unfetchable-1" };
        const first = await post(h, apiKey, body, headers);
        assertEquals(first.status, 400);
        const again = await post(h, apiKey, body, headers);
        assertEquals([again.status, again.body], [400, first.body]);
        assertEquals(again.res.headers.get("idempotent-replayed"), "true");
        assertEquals(await usedToday(h, apiKey), before + 1);
        const events = [];
        for await (const e of h.services.store.readAll()) {
          if (e.type === "MetadataImageUnfetchable") events.push(e);
        }
        const last = events.at(-1)!;
        assertEquals(last.data.reason, first.body.error.fields.imageUrl);
        // The reason names the address; the URL's path and query are not kept.
        assert(!JSON.stringify(last).includes("/a.png"), "the URL itself is not kept");
        const report = await replayAndCompare(h.kv, allProjections);
        assert(report.equal, JSON.stringify(report.mismatches.slice(0, 2)));
      },
    );

    await t.step(
      "Idempotency-Key: a retry replays the 201 without hosting or counting again",
      async () => {
        const body = { ...meta, imageBase64: toBase64(makePng(5, 5)) };
        const headers = { "idempotency-key": "meta-retry-1" };
        const before = await usedToday(h, apiKey);
        const first = await post(h, apiKey, body, headers);
        assertEquals(first.status, 201);
        const again = await post(h, apiKey, body, headers);
        assertEquals(again.status, 201);
        assertEquals(again.body, first.body);
        assertEquals(again.res.headers.get("idempotent-replayed"), "true");
        assertEquals(await usedToday(h, apiKey), before + 1);
        const other = await post(h, apiKey, { ...body, name: "Else" }, headers);
        assertEquals([other.status, other.body.error.code], [422, "idempotency_key_reused"]);

        // A refusal is final too: replayed, not re-run.
        const badBody = { ...meta, imageBase64: toBase64(HTML_PAGE) };
        const refused = await post(h, apiKey, badBody, { "idempotency-key": "meta-retry-2" });
        const replayed = await post(h, apiKey, badBody, { "idempotency-key": "meta-retry-2" });
        assertEquals([refused.status, replayed.status], [400, 400]);
        assertEquals(replayed.body, refused.body);
        assertEquals(replayed.res.headers.get("idempotent-replayed"), "true");
      },
    );

    await t.step(
      "hosted files: headers, strong ETag, 304 on If-None-Match, HEAD, CORS, no key",
      async () => {
        const webp = makeWebp(6, 6);
        const r = await post(h, apiKey, { ...meta, imageBase64: toBase64(webp) });
        const imageId = await sha256Hex(webp);
        const files: [string, string, number][] = [
          [
            path(r.body.metadataUri),
            "application/json",
            (await storedEvent(h, r.body.id)).data.json.length,
          ],
          [path(r.body.imageUri), "image/webp", webp.length],
        ];
        for (const [p, type, length] of files) {
          const res = await h.request(p);
          const body = new Uint8Array(await res.arrayBuffer());
          assertEquals(res.status, 200);
          assertEquals(res.headers.get("content-type"), type);
          assertEquals(res.headers.get("content-length"), String(length));
          assertEquals(body.length, length);
          assertEquals(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
          assertEquals(res.headers.get("x-content-type-options"), "nosniff");
          assertEquals(res.headers.get("access-control-allow-origin"), "*");
          const etag = res.headers.get("etag")!;
          assertMatch(etag, /^"[0-9a-f]+"$/); // strong
          if (type.startsWith("image/")) assertEquals(etag, `"${imageId}"`);

          for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, "*"]) {
            const cached = await h.request(p, { headers: { "if-none-match": inm } });
            assertEquals(cached.status, 304, inm);
            assertEquals(await cached.text(), "");
            assertEquals(cached.headers.get("etag"), etag);
            assertEquals(
              cached.headers.get("cache-control"),
              "public, max-age=31536000, immutable",
            );
            assertEquals(cached.headers.get("access-control-allow-origin"), "*");
          }
          const miss = await h.request(p, { headers: { "if-none-match": '"other"' } });
          assertEquals(miss.status, 200);
          await miss.body?.cancel();

          const head = await h.request(p, { method: "HEAD" });
          assertEquals(head.status, 200);
          assertEquals(head.headers.get("content-type"), type);
          assertEquals(head.headers.get("content-length"), String(length));
          assertEquals(head.headers.get("etag"), etag);
          assertEquals(await head.text(), "");
        }
      },
    );

    await t.step(
      "hosted files: unknown ids, wrong extensions and odd names are 404 in the error shape",
      async () => {
        const png = makePng(7, 7);
        const r = await post(h, apiKey, { ...meta, imageBase64: toBase64(png) });
        const imageId = await sha256Hex(png);
        const paths = [
          `/m/${"0".repeat(32)}.json`,
          `/m/${r.body.id}.png`,
          `/m/${r.body.id}`,
          `/m/${r.body.id.toUpperCase()}.json`,
          `/i/${"0".repeat(64)}.png`,
          `/i/${imageId}.jpg`,
          `/i/${imageId}.webp`,
          `/i/${imageId}.gif`,
          `/i/${imageId}`,
          `/i/${r.body.id}.json`,
        ];
        for (const p of paths) {
          for (const method of ["GET", "HEAD"]) {
            const res = await h.request(p, { method });
            assertEquals(res.status, 404, `${method} ${p}`);
            if (method === "GET") {
              assertEquals((await res.json()).error.code, "not_found");
            } else await res.body?.cancel();
          }
        }
        // Deeper paths and other methods get the hosted 404 too, with its headers.
        for (
          const [method, p] of [
            ["GET", `/m/${r.body.id}.json/`],
            ["GET", "/m/a/b"],
            ["GET", "/i/"],
            ["POST", `/m/${r.body.id}.json`],
            ["DELETE", `/i/${imageId}.png`],
          ]
        ) {
          const res = await h.request(p, { method });
          assertEquals(res.status, 404, `${method} ${p}`);
          assertEquals(res.headers.get("cache-control"), "no-store", `${method} ${p}`);
          assertEquals(res.headers.get("x-content-type-options"), "nosniff");
          assertEquals(res.headers.get("access-control-allow-origin"), "*");
          assertEquals((await res.json()).error.code, "not_found");
        }
        // A CORS preflight from a browser client that adds a header.
        const pre = await h.request(`/i/${imageId}.png`, {
          method: "OPTIONS",
          headers: { origin: "https://wallet.example", "access-control-request-method": "GET" },
        });
        assertEquals(pre.status, 204);
        assertEquals(pre.headers.get("access-control-allow-origin"), "*");
        assertMatch(pre.headers.get("access-control-allow-methods") ?? "", /GET/);
        const ok = await h.request(`/i/${imageId}.png`);
        assertEquals(ok.status, 200);
        await ok.body?.cancel();
      },
    );

    await t.step(
      "daily limit: exactly 100 per day under concurrency, then 429; the 5000 cap too",
      async () => {
        const { apiKey: key2, purchaseId } = await h.newApiKey();
        const tiny = toBase64(makePng(1, 1));

        // The hosted-items cap, faked at its edge instead of hosting 5000 items.
        const capKey = ["p", "hosted_count", purchaseId];
        await h.kv.set(capKey, 5000);
        const capped = await post(h, key2, { ...meta, imageBase64: tiny });
        assertEquals([capped.status, capped.body.error.code], [429, "daily_limit"]);
        assertMatch(capped.body.error.message, /5000/);
        assertEquals(capped.res.headers.get("retry-after"), null);
        await h.kv.delete(capKey);

        assertEquals(h.services.config.limits.metadataPerDay, 100);
        const results = await Promise.all(
          Array.from(
            { length: 105 },
            (_, i) => post(h, key2, { ...meta, name: `T${i}`, imageBase64: tiny }),
          ),
        );
        const statuses = results.map((r) => r.status);
        assertEquals(statuses.filter((s) => s === 201).length, 100);
        assertEquals(statuses.filter((s) => s === 429).length, 5);
        assertEquals(await usedToday(h, key2), 100);
        const count = (await h.kv.get<number>(capKey)).value;
        assertEquals(count, 100);

        const over = await post(h, key2, { ...meta, imageBase64: tiny });
        assertEquals(over.status, 429);
        assertEquals(over.body.error.code, "daily_limit");
        const retry = Number(over.res.headers.get("retry-after"));
        assert(retry >= 1 && retry <= 86_400, String(retry));
      },
    );
  } finally {
    await h.close();
  }
});

Deno.test("a 429 under an Idempotency-Key is not replayed: the retry after the reset runs", async () => {
  let now = Date.UTC(2026, 10, 22, 23, 30, 0);
  const h = await startHarness({ env: { METADATA_PER_DAY: "1" }, clock: () => now });
  try {
    const { apiKey } = await h.newApiKey();
    const body = { name: "Late", symbol: "LATE", imageBase64: toBase64(makePng(1, 1)) };
    assertEquals((await post(h, apiKey, body)).status, 201);

    const idem = { "idempotency-key": "after-midnight" };
    const limited = await post(h, apiKey, { ...body, name: "Later" }, idem);
    assertEquals([limited.status, limited.body.error.code], [429, "daily_limit"]);
    assertEquals(limited.res.headers.get("retry-after"), "1800");

    // The client waits as told and retries with the same key: the limit has reset, so it runs.
    now += 1800_000;
    const retried = await post(h, apiKey, { ...body, name: "Later" }, idem);
    assertEquals(retried.status, 201);
    assertEquals(retried.res.headers.get("idempotent-replayed"), null);
    // From then on the success is what the key replays.
    const again = await post(h, apiKey, { ...body, name: "Later" }, idem);
    assertEquals([again.status, again.body], [201, retried.body]);
    assertEquals(again.res.headers.get("idempotent-replayed"), "true");
  } finally {
    await h.close();
  }
});

Deno.test("an image whose bytes are gone (a log restored by events:import) is repaired by posting it again", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const png = makePng(40, 40);
    const body = { name: "Lost", symbol: "LOST", imageBase64: toBase64(png) };
    const first = await post(h, apiKey, body);
    assertEquals(first.status, 201);
    const imagePath = path(first.body.imageUri);
    // What an import leaves: the manifest (a projection) without the bytes (not in the log).
    const imageId = imagePath.slice(3, 67);
    for await (const e of h.kv.list({ prefix: ["blob", imageId] })) await h.kv.delete(e.key);
    const broken = await h.request(imagePath);
    assertEquals(broken.status, 500);
    await broken.body?.cancel();

    const again = await post(h, apiKey, { ...body, name: "Found" });
    assertEquals(again.status, 201);
    assertEquals(path(again.body.imageUri), imagePath);
    const served = await h.request(imagePath);
    assertEquals(served.status, 200);
    assertEquals(new Uint8Array(await served.arrayBuffer()), png);
  } finally {
    await h.close();
  }
});
