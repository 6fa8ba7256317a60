/**
 * imageUrl through the endpoint against a local plain-http server. Only the test-only switch
 * (`allowLoopbackImageFetchForTests`) lets the fetcher reach 127.0.0.1; every other rule of the
 * production policy still applies, which is what the redirect cases rely on.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { sha256Hex } from "../../src/kernel/hashing.ts";
import type { Config } from "../../src/config.ts";
import type { MetadataTestKnobs } from "../../src/metadata/handle.ts";
import type { StartTimer } from "../../src/metadata/image/fetch-image.ts";
import {
  HTML_PAGE,
  httpResponse,
  makeJpeg,
  makePng,
  startServer,
  writeAll,
} from "./image/fixtures.ts";

const MiB = 1_048_576;
// The production budget; in this file the test, not the wall clock, decides when it runs out.
const TIMEOUT_MS = 10_000;

// deno-lint-ignore no-explicit-any
type Body = any;

async function post(
  h: Harness,
  apiKey: string,
  json: unknown,
): Promise<{ status: number; body: Body }> {
  const res = await h.request("/v1/metadata", { method: "POST", headers: bearer(apiKey), json });
  return { status: res.status, body: await res.json() };
}

Deno.test("imageUrl: fetched from a local server with the test-only loopback switch", async (t) => {
  const png = makePng(9, 9);
  const exact = makeJpeg(32, 32, MiB);
  const routes: Record<string, (port: number) => Uint8Array> = {
    // Content-Type lies on purpose: the bytes decide.
    "/img": () =>
      httpResponse(200, { "content-type": "text/html", "content-length": String(png.length) }, png),
    "/exact": () => httpResponse(200, { "content-length": String(exact.length) }, exact),
    "/big": () => {
      const big = makePng(16, 16, MiB + 1);
      return httpResponse(200, { "content-length": String(big.length) }, big);
    },
    "/html": () =>
      httpResponse(
        200,
        { "content-type": "image/png", "content-length": String(HTML_PAGE.length) },
        HTML_PAGE,
      ),
    "/gone": () => httpResponse(404, { "content-length": "0" }),
    "/hop": () => httpResponse(302, { location: "/img", "content-length": "0" }),
    "/to-metadata": () =>
      httpResponse(302, {
        location: "http://169.254.169.254/latest/meta-data/",
        "content-length": "0",
      }),
    "/to-private": () =>
      httpResponse(301, { location: "http://10.0.0.5/x.png", "content-length": "0" }),
    "/to-mapped": (port) =>
      httpResponse(307, {
        location: `http://[::ffff:127.0.0.1]:${port}/img`,
        "content-length": "0",
      }),
    "/loop": () => httpResponse(302, { location: "/loop", "content-length": "0" }),
  };
  // Image fetch budgets in flight: they run out only when the slow route says so.
  const budgets = new Set<() => void>();
  const startTimer: StartTimer = (_ms, onTimeout) => {
    budgets.add(onTimeout);
    return () => budgets.delete(onTimeout);
  };
  let slowHungUp!: () => void;
  const hungUp = new Promise<void>((r) => (slowHungUp = r));
  const server = startServer(async (conn, request) => {
    const path = request.split(" ")[1];
    if (path === "/slow") {
      // Never answer: the budget runs out now (the injected timer), and the fetcher hangs up.
      for (const runOut of budgets) runOut();
      while ((await conn.read(new Uint8Array(64))) !== null) { /* drain */ }
      slowHungUp();
      return;
    }
    const route = routes[path] ?? routes["/gone"];
    await writeAll(conn, route(server.port));
  });
  const url = (p: string) => `http://127.0.0.1:${server.port}${p}`;

  const config = {
    allowLoopbackImageFetchForTests: true,
    imageFetchTimerForTests: startTimer,
  } satisfies Partial<Config> & MetadataTestKnobs;
  const h = await startHarness({ config: config as Partial<Config> });
  try {
    const { apiKey } = await h.newApiKey();
    const meta = { name: "Fetched", symbol: "FET" };

    await t.step(
      "an image is fetched, hosted and served byte for byte; a redirect is followed",
      async () => {
        for (const p of ["/img", "/hop"]) {
          const r = await post(h, apiKey, { ...meta, imageUrl: url(p) });
          assertEquals(r.status, 201, JSON.stringify(r.body));
          assertEquals(
            r.body.imageUri,
            `${h.services.config.publicBaseUrl}/i/${await sha256Hex(png)}.png`,
          );
          const img = await h.request(new URL(r.body.imageUri).pathname);
          assertEquals(img.headers.get("content-type"), "image/png");
          assertEquals(new Uint8Array(await img.arrayBuffer()), png);
        }
      },
    );

    await t.step("1 MiB exactly is accepted, 1 MiB + 1 refused", async () => {
      const ok = await post(h, apiKey, { ...meta, imageUrl: url("/exact") });
      assertEquals(ok.status, 201, JSON.stringify(ok.body));
      assert(ok.body.imageUri.endsWith(".jpg"));
      const img = await h.request(new URL(ok.body.imageUri).pathname);
      assertEquals(new Uint8Array(await img.arrayBuffer()), exact);

      const big = await post(h, apiKey, { ...meta, imageUrl: url("/big") });
      assertEquals(big.status, 400);
      assertMatch(big.body.error.fields.imageUrl, /larger than 1048576/);
    });

    await t.step(
      "a non-image, an HTTP error and a redirect loop are 400 on imageUrl with the reason",
      async () => {
        const cases: [string, RegExp][] = [
          ["/html", /not a PNG, JPEG or WebP/],
          ["/gone", /HTTP 404/],
          ["/loop", /too many redirects/],
        ];
        for (const [p, reason] of cases) {
          const r = await post(h, apiKey, { ...meta, imageUrl: url(p) });
          assertEquals(r.status, 400, p);
          assertEquals(r.body.error.code, "invalid_request");
          assertEquals(Object.keys(r.body.error.fields), ["imageUrl"]);
          assertMatch(r.body.error.fields.imageUrl, reason);
        }
      },
    );

    await t.step(
      "a redirect into a private address is refused, even with the switch on",
      async () => {
        for (const p of ["/to-metadata", "/to-private", "/to-mapped"]) {
          const r = await post(h, apiKey, { ...meta, imageUrl: url(p) });
          assertEquals(r.status, 400, p);
          assertMatch(r.body.error.fields.imageUrl, /not public/);
        }
      },
    );

    await t.step(
      "a server that never answers times out, and the fetcher hangs up (injected timer)",
      async () => {
        const r = await post(h, apiKey, { ...meta, imageUrl: url("/slow") });
        assertEquals(r.status, 400);
        assertEquals(r.body.error.fields.imageUrl, `timed out after ${TIMEOUT_MS / 1000} s`);
        await hungUp;
        assertEquals(budgets.size, 0, "every budget timer is cancelled once its fetch ends");
      },
    );
  } finally {
    await h.close();
    await server.close();
  }
});

Deno.test("imageUrl: production config has neither the loopback switch nor a shorter fetch budget", async () => {
  const { loadConfig } = await import("../../src/config.ts");
  const { DEFAULT_TIMEOUT_MS } = await import("../../src/metadata/image/fetch-image.ts");
  const config = loadConfig({ PORT: "8000" }) as Config & MetadataTestKnobs;
  assertEquals(config.allowLoopbackImageFetchForTests, false);
  assertEquals(config.imageFetchTimeoutMsForTests, undefined);
  assertEquals(config.imageFetchTimerForTests, undefined);
  assertEquals(DEFAULT_TIMEOUT_MS, 10_000);
});
