/**
 * A 429's Retry-After pauses every request, so one bad header (a misconfigured provider asking
 * for a day) must not stall the service: the pause is capped at 60 s, and the log says so. On the
 * embedded chain enforcing the public limits, its 429s rewritten to ask for 86,400 s.
 */
import { Connection } from "@solana/web3.js";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { start } from "../chain/helpers.ts";
import { boundedRpcFetch, MAX_RETRY_AFTER_MS } from "../../src/solana/rpc-fetch.ts";
import { RpcBudget, RpcBusyError } from "../../src/solana/rpc-budget.ts";
import { ThrottleLog } from "../../src/solana/rpc-throttle-log.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";

Deno.test("rpc fetch: a 429 asking for a day pauses the budget for 60 s at most, and the log names what was asked", async () => {
  const chain = await start({ slotMs: "manual", rpcLimits: "public" });
  try {
    const aDay = 86_400;
    const base: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status !== 429) return res;
      const headers = new Headers(res.headers);
      headers.set("retry-after", String(aDay));
      return new Response(res.body, { status: 429, headers });
    };
    const budget = new RpcBudget({ total: null, perMethod: null, windowMs: 10_000 });
    const logger = memoryLogger();
    const conn = new Connection(chain.url, {
      commitment: "confirmed",
      disableRetryOnRateLimit: true,
      fetch: boundedRpcFetch({
        timeoutMs: 5_000,
        retries: 2,
        backoffMs: 10,
        base,
        budget,
        priority: "user",
        throttleLog: new ThrottleLog(logger),
      }),
    });
    for (let i = 0; i < 40; i++) await conn.getSlot();
    const e = await assertRejects(() => conn.getSlot(), RpcBusyError);
    const retryAfterMs = (e as RpcBusyError).retryAfterMs;
    assert(retryAfterMs <= MAX_RETRY_AFTER_MS, `told to retry in ${retryAfterMs} ms`);
    assert(retryAfterMs > MAX_RETRY_AFTER_MS / 2, `told to retry in ${retryAfterMs} ms`);
    // Background work is held back as long, not a day.
    const bg = budget.tryTake(["getSlot"], "background");
    assert("waitMs" in bg && bg.waitMs <= MAX_RETRY_AFTER_MS, JSON.stringify(bg));
    const lines = logger.lines.filter((l) => l.includes("RPC is throttling"));
    assertEquals(lines.length, 1);
    const line = JSON.parse(lines[0]);
    assertEquals([line.retryAfterS, line.retryAfterAskedS, line.capped], [60, aDay, true]);
  } finally {
    await chain.close();
  }
});
