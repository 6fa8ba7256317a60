import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { midHourHarness } from "../support/mid-hour-clock.ts";
import { parseKey } from "../../src/keys/api-key.ts";

Deno.test("GET /v1/pricing needs no key and answers every field of the seed", async () => {
  const h = await startHarness();
  try {
    const res = await h.request("/v1/pricing");
    assertEquals(res.status, 200);
    const body = await res.json();
    assertEquals(body, {
      network: "localnet",
      access: { usd: 10 },
      // ceil(2.99 / 150 * 1e9); the network's share from the chain's rent: mint 1,461,600 +
      // token account 2,039,280 + metadata 5,115,600 + protocol fee 10,000,000 + 5,000; for
      // Token-2022 at most (longest name, symbol, uri, with a transfer fee): the 672-byte mint
      // 5,568,000 + the 182-byte token account 2,157,600 + 5,000
      token: {
        usd: 2.99,
        lamports: "19933334",
        solUsd: 150,
        networkLamports: "18621480",
        token2022NetworkLamports: "7730600",
      },
      limits: {
        requestsPerHour: 600,
        tokensPerDay: 25,
        metadataPerDay: 100,
        imageBytes: 1048576,
        imageMaxWidth: 4096,
        imageMaxHeight: 4096,
        hostedItemsPerKey: 5000,
      },
      // UPDATE_FEE_USD, default 0 (src/pricing/update-fee.ts).
      update: { usd: 0, lamports: "0" },
    });
    assertEquals(res.headers.get("cache-control"), "no-store");
    assertMatch(res.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
    assertEquals(res.headers.get("access-control-allow-origin"), null);
  } finally {
    await h.close();
  }
});

Deno.test("pricing reads the Pyth account on the chain; a stale price is 503 price_unavailable", async () => {
  let offsetMs = 0;
  const h = await startHarness({
    price: "pyth",
    clock: () => Date.now() + offsetMs,
    chain: { solUsdPrice: 200 },
  });
  try {
    const ok = await (await h.request("/v1/pricing")).json();
    assertEquals(ok.token.solUsd, 200);
    assertEquals(ok.token.lamports, "14950000");
    h.chain.setSolPrice(100);
    // The public endpoint shows the reading the source holds as current (under a second old).
    offsetMs = 5_001;
    assertEquals((await (await h.request("/v1/pricing")).json()).token.solUsd, 100);
    h.chain.pausePricePublishing(true);
    offsetMs = 121_000;
    const stale = await h.request("/v1/pricing");
    assertEquals(stale.status, 503);
    const body = await stale.json();
    assertEquals(body.error.code, "price_unavailable");
    assertEquals(typeof body.error.message, "string");
    assertEquals(stale.headers.get("retry-after"), "5");
  } finally {
    await h.close();
  }
});

Deno.test("unknown routes are 404 not_found in the seed's error shape", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const keyed = { authorization: `Bearer ${apiKey}` };
    for (const path of ["/v1/nope", "/nope", "/v2/pricing", "/v1/tokens/x/y", "/v1/me/"]) {
      // With or without a key: an unknown path is not an authentication question.
      for (const headers of [{}, keyed]) {
        const res = await h.request(path, { headers });
        assertEquals(res.status, 404, `${path} ${JSON.stringify(headers).length}`);
        assertEquals(await res.json(), {
          error: { code: "not_found", message: "No such endpoint", fields: {} },
        });
      }
    }
    // A real endpoint, parameters included, still asks for a key first.
    for (const path of ["/v1/me", "/v1/tokens/anything", "/v1/transactions/x"]) {
      assertEquals((await h.request(path)).status, 401, path);
    }
  } finally {
    await h.close();
  }
});

Deno.test("missing, malformed, mistyped and wrong keys are all 401 unauthorized", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const parsed = parseKey("tcb", apiKey)!;
    const flipped = apiKey.slice(0, -8) + (apiKey.at(-8) === "a" ? "b" : "a") + apiKey.slice(-7);
    const other = await h.newApiKey();
    const wrongSecret = `tcb_live_${parsed.keyId}_${parseKey("tcb", other.apiKey)!.secret}`;
    const cases: Record<string, string | undefined> = {
      missing: undefined,
      scheme: `Basic ${btoa("a:b")}`,
      garbage: "Bearer nope",
      checksum: `Bearer ${flipped}`,
      prefix: `Bearer ${apiKey.replace(/^tcb_/, "xyz_")}`,
      wrongSecret: `Bearer ${wrongSecret}`,
    };
    for (const [name, header] of Object.entries(cases)) {
      const res = await h.request("/v1/me", { headers: header ? { authorization: header } : {} });
      assertEquals(res.status, 401, name);
      const body = await res.json();
      assertEquals(body.error.code, "unauthorized", name);
      // The same answer for every case, saying where keys come from: the portal.
      assertEquals(
        body.error.message,
        `A valid API key is required (Authorization: Bearer <key>); keys are bought at ${h.services.config.publicBaseUrl}/`,
        name,
      );
      assertEquals(res.headers.get("www-authenticate"), 'Bearer realm="api"');
    }
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
    // The scheme name is case-insensitive (RFC 9110 11.1); the key itself is not.
    for (const header of [`bearer ${apiKey}`, `BEARER  ${apiKey}`]) {
      const res = await h.request("/v1/me", { headers: { authorization: header } });
      assertEquals(res.status, 200, header);
    }
    const upper = await h.request("/v1/me", {
      headers: { authorization: `Bearer ${apiKey.toUpperCase()}` },
    });
    assertEquals(upper.status, 401);
  } finally {
    await h.close();
  }
});

Deno.test("GET /v1/me answers the key, its wallet, today's usage, the limits and its conduct", async () => {
  // Mid-hour, so the two requests cannot fall on two days.
  const h = await startHarness(midHourHarness());
  try {
    const { apiKey, keyId, wallet } = await h.newApiKey();
    await h.request("/v1/me", { headers: bearer(apiKey) });
    const res = await h.request("/v1/me", { headers: bearer(apiKey) });
    assertEquals(await res.json(), {
      keyId,
      wallet: wallet.publicKey.toBase58(),
      usageToday: { requests: 2, tokens: 0, metadata: 0 },
      limits: { tokensPerDay: 25, metadataPerDay: 100, requestsPerHour: 600 },
      conduct: {
        recent: { window: 100, landings: 0, unverified: 0, payers: 0 },
        byKeyWallet: 0,
        unverifiedLandings: [],
        policy: {
          refusePayerAfter: 1,
          suspendAfterByKeyWallet: 3,
          suspendShare: 0.5,
          suspendMinPayers: 10,
        },
      },
    });
  } finally {
    await h.close();
  }
});

Deno.test("the hourly request limit is exact, with RateLimit headers and Retry-After", async () => {
  let now = Date.UTC(2026, 10, 22, 10, 59, 0);
  const h = await startHarness({ env: { REQUESTS_PER_HOUR: "5" }, clock: () => now });
  try {
    const { apiKey } = await h.newApiKey();
    for (let i = 1; i <= 5; i++) {
      const res = await h.request("/v1/me", { headers: bearer(apiKey) });
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("ratelimit-limit"), "5");
      assertEquals(res.headers.get("ratelimit-remaining"), String(5 - i));
      assertEquals(res.headers.get("ratelimit-reset"), "60");
      assertEquals(res.headers.get("ratelimit-policy"), '"hour";q=5;w=3600');
      assertEquals(res.headers.get("ratelimit"), `"hour";r=${5 - i};t=60`);
    }
    const refused = await h.request("/v1/me", { headers: bearer(apiKey) });
    assertEquals(refused.status, 429);
    assertEquals((await refused.json()).error.code, "rate_limited");
    assertEquals(refused.headers.get("retry-after"), "60");
    assertEquals(refused.headers.get("ratelimit-remaining"), "0");
    // The next UTC clock hour is a fresh window.
    now += 60_000;
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("40 parallel requests with 25 left: exactly 25 pass", async () => {
  const h = await startHarness({ env: { REQUESTS_PER_HOUR: "25" } });
  try {
    const { apiKey } = await h.newApiKey();
    const statuses = await Promise.all(
      Array.from(
        { length: 40 },
        () => h.request("/v1/me", { headers: bearer(apiKey) }).then((r) => r.status),
      ),
    );
    assertEquals(statuses.filter((s) => s === 200).length, 25);
    assertEquals(statuses.filter((s) => s === 429).length, 15);
  } finally {
    await h.close();
  }
});

Deno.test("bodies over the limit are 413 before parsing; malformed JSON and wrong type are 400", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const big = await h.request("/v1/tokens", {
      method: "POST",
      headers: { ...bearer(apiKey), "content-type": "application/json" },
      body: "x".repeat(64 * 1024 + 1),
    });
    assertEquals(big.status, 413);
    assertEquals((await big.json()).error.code, "payload_too_large");
    const bad = await h.request("/portal/api/challenge", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    assertEquals(bad.status, 400);
    assertEquals((await bad.json()).error.fields, { body: "malformed JSON" });
    const unknown = await h.request("/portal/api/challenge", {
      method: "POST",
      json: { wallet: "x", extra: 1 },
    });
    const fields = (await unknown.json()).error.fields;
    assertEquals(Object.keys(fields).sort(), ["extra", "wallet"]);
  } finally {
    await h.close();
  }
});

Deno.test("request logs are structured, carry the key id and never the key", async () => {
  const h = await startHarness();
  try {
    const { apiKey, keyId } = await h.newApiKey();
    await h.request("/v1/me", { headers: bearer(apiKey) });
    const secret = parseKey("tcb", apiKey)!.secret;
    assert(h.logs.every((l) => !l.includes(secret) && !l.includes(apiKey)));
    const line = h.logs.map((l) => JSON.parse(l)).find((l) =>
      l.msg === "request" && l.path === "/v1/me"
    );
    assertEquals([line.method, line.status, line.keyId], ["GET", 200, keyId]);
    assertEquals(typeof line.ms, "number");
    // Nor in any event.
    for await (const e of h.services.store.readAll()) {
      assert(!JSON.stringify(e).includes(secret));
    }
  } finally {
    await h.close();
  }
});
