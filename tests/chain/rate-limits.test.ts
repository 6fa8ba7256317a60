/**
 * CHAIN_RPC_LIMITS=public: the embedded chain refuses as the public endpoints do, past 100
 * requests per 10 s per client or 40 of one method, with HTTP 429, Retry-After and their JSON-RPC
 * error body. The windows on an injected clock, then the same over real HTTP.
 */
import { assert, assertEquals } from "../support/assert.ts";
import {
  ChainRateLimiter,
  TOO_MANY_FOR_METHOD,
  TOO_MANY_FROM_IP,
} from "../../src/chain/rate-limits.ts";
import { start } from "./helpers.ts";

const call = (method: string, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params: [] });

Deno.test("chain limits: given 100 requests from a client in 10 s, then the 101st is refused until the first leaves", async () => {
  let now = 1_000_000;
  const limiter = new ChainRateLimiter(undefined, () => now);
  const methods = ["getSlot", "getBalance", "getBlockHeight"];
  for (let i = 0; i < 100; i++) {
    assertEquals(limiter.check("10.0.0.1", call(methods[i % 3], i)), null, `request ${i}`);
    now += 50;
  }
  const refused = limiter.check("10.0.0.1", call("getHealth", "x"))!;
  assertEquals(refused.status, 429);
  // The first arrived 5 s ago and leaves the window in 5 s.
  assertEquals(refused.headers.get("retry-after"), "5");
  assertEquals(await refused.json(), {
    jsonrpc: "2.0",
    error: { code: 429, message: TOO_MANY_FROM_IP },
    id: "x",
  });
  // Another client has its own window; refused requests were not counted.
  assertEquals(limiter.check("10.0.0.2", call("getHealth")), null);
  now += 5_000;
  assertEquals(limiter.check("10.0.0.1", call("getHealth")), null);
  assertEquals(limiter.refused, 1);
});

Deno.test("chain limits: the 41st call of one method in 10 s is refused, other methods go; a batch counts each call", async () => {
  let now = 2_000_000;
  const limiter = new ChainRateLimiter(undefined, () => now);
  const batch = JSON.stringify(
    Array.from({ length: 39 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "getTransaction" })),
  );
  assertEquals(limiter.check("c", batch), null);
  now += 1_000;
  assertEquals(limiter.check("c", call("getTransaction")), null);
  const refused = limiter.check("c", call("getTransaction", 7))!;
  assertEquals(refused.status, 429);
  assertEquals(refused.headers.get("retry-after"), "9");
  assertEquals((await refused.json()).error, { code: 429, message: TOO_MANY_FOR_METHOD });
  assertEquals(limiter.check("c", call("getSignatureStatuses")), null);
  now += 9_000;
  assertEquals(limiter.check("c", call("getTransaction")), null);
});

Deno.test("chain limits over HTTP: 429 with Retry-After and the endpoints' body, per client address; off by default", async () => {
  const limited = await start({ slotMs: "manual", rpcLimits: "public" });
  const open = await start({ slotMs: "manual" });
  const other = Deno.createHttpClient({ localAddress: "127.0.0.2" });
  try {
    const post = (url: string, body: string, client?: Deno.HttpClient) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        client,
      });
    for (let i = 0; i < 40; i++) {
      const res = await post(limited.url, call("getSlot", i));
      assertEquals(res.status, 200, `call ${i}`);
      await res.body?.cancel();
    }
    const res = await post(limited.url, call("getSlot", 40));
    assertEquals(res.status, 429);
    const retryAfter = Number(res.headers.get("retry-after"));
    assert(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}`);
    assertEquals(await res.json(), {
      jsonrpc: "2.0",
      error: { code: 429, message: TOO_MANY_FOR_METHOD },
      id: 40,
    });
    // Another method, and another client address, still go; the admin surface is not limited.
    const block = await post(limited.url, call("getBlockHeight"));
    assertEquals([block.status, typeof (await block.json()).result], [200, "number"]);
    const fromElsewhere = await post(limited.url, call("getSlot"), other);
    assertEquals(fromElsewhere.status, 200);
    await fromElsewhere.body?.cancel();
    const state = await fetch(`${limited.url}/admin/state`);
    assertEquals((await state.json()).rpcLimits, "public");

    for (let i = 0; i < 60; i++) {
      const r = await post(open.url, call("getSlot", i));
      assertEquals(r.status, 200, `unlimited chain, call ${i}`);
      await r.body?.cancel();
    }
  } finally {
    other.close();
    await limited.close();
    await open.close();
  }
});
