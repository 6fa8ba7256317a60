/**
 * GET /v1/pricing needs no key and has no rate limit, so what it costs on the RPC is what anyone
 * on the internet can make us spend: it must not be one price read per request.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";

function countingFetch(account: () => string) {
  const counter = { priceReads: 0 };
  const f: typeof fetch = (input, init) => {
    const body = typeof init?.body === "string" ? init.body : "";
    if (body.includes('"getAccountInfo"') && body.includes(account())) counter.priceReads++;
    return fetch(input, init);
  };
  return { counter, f };
}

Deno.test("GET /v1/pricing: a burst of anonymous requests costs one price read, not one each", async () => {
  // Ahead of the chain's publish times by a few seconds (refused only past 10 s), frozen.
  let now = Date.now() + 5_000;
  let account = "";
  const { counter, f } = countingFetch(() => account);
  const h = await startHarness({ price: "pyth", clock: () => now, rpcFetch: f });
  account = h.chain.pythSolUsdAccount;
  try {
    // Sequential and concurrent, as a client hammering the public endpoint would.
    for (let i = 0; i < 20; i++) {
      const res = await h.request("/v1/pricing");
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
    const burst = await Promise.all(Array.from({ length: 20 }, () => h.request("/v1/pricing")));
    for (const res of burst) {
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
    assertEquals(counter.priceReads, 1, "one price read for 40 anonymous requests");
    // The price shown still moves on: once the reading is no longer current, it is read again.
    now += 1_001;
    const res = await h.request("/v1/pricing");
    assertEquals(res.status, 200);
    const body = await res.json();
    assert(body.token.solUsd > 0);
    assertEquals(counter.priceReads, 2);
  } finally {
    await h.close();
  }
});

Deno.test("GET /v1/pricing: while the price is stale, a concurrent burst shares one read", async () => {
  let now = Date.now() + 5_000;
  let account = "";
  const { counter, f } = countingFetch(() => account);
  const h = await startHarness({ price: "pyth", clock: () => now, rpcFetch: f });
  account = h.chain.pythSolUsdAccount;
  try {
    h.chain.pausePricePublishing(true);
    now += 200_000;
    const burst = await Promise.all(Array.from({ length: 20 }, () => h.request("/v1/pricing")));
    for (const res of burst) {
      assertEquals(res.status, 503);
      assertEquals((await res.json()).error.code, "price_unavailable");
    }
    assertEquals(counter.priceReads, 1);
  } finally {
    await h.close();
  }
});
