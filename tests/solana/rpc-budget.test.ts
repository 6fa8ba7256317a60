/**
 * The RPC budget's windows on an injected clock: totals, per-method limits, counting from
 * completion, the background share, user-first waiting, refusals with a retry time, and a property:
 * whatever the latencies, a server counting arrivals in any 10 s window never sees more than the
 * limits.
 */
import fc from "fast-check";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import {
  PUBLIC_RPC_LIMITS,
  RpcBudget,
  type RpcBudgetOptions,
  RpcBusyError,
  type RpcTicket,
} from "../../src/solana/rpc-budget.ts";
import { refusalIn } from "../../src/solana/rpc-refusals.ts";

/** A manual clock whose sleeps move it forward. */
function manual(start = 1_000_000) {
  let now = start;
  return {
    clock: () => now,
    advance: (ms: number) => void (now += ms),
    sleep: (ms: number) => {
      now += ms;
      return Promise.resolve();
    },
  };
}

function budget(t: ReturnType<typeof manual>, opts: Partial<RpcBudgetOptions> = {}) {
  return new RpcBudget(PUBLIC_RPC_LIMITS, { clock: t.clock, sleep: t.sleep, ...opts });
}

function take(b: RpcBudget, methods: string[], p: "user" | "background" = "user"): RpcTicket {
  const r = b.tryTake(methods, p);
  if (!("ticket" in r)) throw new Error(`refused: ${r.reason} (${r.waitMs} ms)`);
  return r.ticket;
}

const METHODS = ["getBlockHeight", "getTransaction", "getLatestBlockhash"];

Deno.test("budget: given 100 requests in the window, when one more comes, then it waits until the first leaves", () => {
  const t = manual();
  const b = budget(t);
  for (let i = 0; i < 100; i++) {
    take(b, [METHODS[i % 3]]).done();
    t.advance(10);
  }
  // The first finished at start; the window is 10 s from it.
  const r = b.tryTake(["getSlot"], "user");
  assert("waitMs" in r, "the 101st request in 10 s went through");
  assertEquals(r.waitMs, 1_000_000 + 10_000 - t.clock() + 1);
  assert(r.reason.includes("100 requests"), r.reason);
  t.advance(r.waitMs);
  take(b, ["getSlot"]).done();
});

Deno.test("budget: given 40 calls of one method, then the 41st waits while other methods still go", () => {
  const t = manual();
  const b = budget(t);
  for (let i = 0; i < 40; i++) take(b, ["getSignaturesForAddress"]).done();
  const r = b.tryTake(["getSignaturesForAddress"], "user");
  assert("waitMs" in r && r.reason.includes("40 getSignaturesForAddress"), JSON.stringify(r));
  take(b, ["getBlockHeight"]).done();
  assertEquals(b.inWindow(), 41);
  assertEquals(b.inWindow("getSignaturesForAddress"), 40);
});

Deno.test("budget: every call of a batch counts, for the total and for its method", () => {
  const t = manual();
  const b = budget(t);
  take(b, Array(39).fill("getTransaction")).done();
  assert("waitMs" in b.tryTake(["getTransaction", "getTransaction"], "user"));
  take(b, ["getTransaction"]).done();
  assertEquals(b.inWindow("getTransaction"), 40);
});

Deno.test("budget: a request counts from when it finished, and while in flight", () => {
  const t = manual();
  const b = budget(t);
  const slow = take(b, ["getTransaction"]);
  for (let i = 0; i < 99; i++) take(b, [METHODS[i % 3]]).done();
  t.advance(12_000);
  // 99 finished 12 s ago have left; the slow one is still in flight and counts.
  assertEquals(b.inWindow(), 1);
  for (let i = 0; i < 99; i++) take(b, [METHODS[i % 3]]).done();
  const r = b.tryTake(["getBalance"], "user");
  assert("waitMs" in r, "in-flight request not counted");
  slow.done();
  t.advance(9_999);
  assert("waitMs" in b.tryTake(["getBalance"], "user"), "left the window before 10 s");
  t.advance(2);
  take(b, ["getBalance"]).done();
});

Deno.test("budget: background work holds at most its share, and users get the rest", () => {
  const t = manual();
  const b = budget(t);
  for (let i = 0; i < 20; i++) take(b, ["getSignaturesForAddress"], "background").done();
  assert("waitMs" in b.tryTake(["getSignaturesForAddress"], "background"), "over 20 per method");
  for (let i = 0; i < 30; i++) take(b, [`m${i}`], "background").done();
  assert("waitMs" in b.tryTake(["other"], "background"), "background over 50 in all");
  for (let i = 0; i < 20; i++) take(b, ["getSignaturesForAddress"], "user").done();
  for (let i = 0; i < 30; i++) take(b, ["getBlockHeight"], "user").done();
  assertEquals(b.inWindow(), 100);
});

Deno.test("budget: a user request waits when room comes soon, and is refused with a retry time when not", async () => {
  const t = manual();
  const b = budget(t, { userWaitMs: 2_000 });
  for (let i = 0; i < 100; i++) {
    take(b, [METHODS[i % 3]]).done();
    if (i === 0) t.advance(8_500);
  }
  // The first leaves in 1.5 s: within the 2 s a user may wait.
  const before = t.clock();
  (await b.acquire(["getSlot"], "user")).done();
  assertEquals(t.clock() - before, 1_501);
  // The rest leave 10 s after they finished, 8.5 s from now: too long.
  const e = await assertRejects(() => b.acquire(["getSlot"], "user"), RpcBusyError);
  assertEquals((e as RpcBusyError).retryAfterMs, 8_500);
  assert(e.message.includes("retry in 9 s"), e.message);
});

Deno.test("budget: background waits as long as it takes, and never goes before a waiting user", async () => {
  const t = manual();
  const order: string[] = [];
  // Sleeps take a real turn of the event loop, so both waiters are parked at once; each wakes at
  // its own time (a later sleep does not add to an earlier one).
  const b = budget(t, {
    userWaitMs: 5_000,
    sleep: async (ms) => {
      const until = t.clock() + ms;
      await new Promise((r) => setTimeout(r, 0));
      t.advance(Math.max(0, until - t.clock()));
    },
  });
  // 100 finished 10 ms apart: room comes back one request at a time.
  for (let i = 0; i < 100; i++) {
    take(b, [METHODS[i % 3]], "user").done();
    t.advance(10);
  }
  t.advance(6_000);
  // Background asks first and wakes first; the user still goes first.
  const bg = b.acquire(["getBlockHeight"], "background").then((k) => {
    order.push("background");
    k.done();
  });
  const user = b.acquire(["getBlockHeight"], "user").then((k) => {
    order.push("user");
    k.done();
  });
  await Promise.all([bg, user]);
  assertEquals(order, ["user", "background"]);
});

Deno.test("budget: a 429's Retry-After stops everything until it has passed", async () => {
  const t = manual();
  const b = budget(t, { userWaitMs: 2_000 });
  b.pauseFor(30_000);
  const e = await assertRejects(() => b.acquire(["getSlot"], "user"), RpcBusyError);
  assertEquals((e as RpcBusyError).retryAfterMs, 30_000);
  const r = b.tryTake(["getSlot"], "background");
  assert("waitMs" in r && r.waitMs === 30_000);
  t.advance(30_000);
  take(b, ["getSlot"]).done();
});

Deno.test("budget: unlimited lets everything through at once", () => {
  const t = manual();
  const b = new RpcBudget({ total: null, perMethod: null, windowMs: 10_000 }, { clock: t.clock });
  for (let i = 0; i < 10_000; i++) take(b, ["getSlot"], i % 2 ? "user" : "background").done();
  assert(b.unlimited);
});

Deno.test("budget property: whatever the latencies, no 10 s window at the server holds more than 100, or 40 of a method", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          gap: fc.integer({ min: 0, max: 400 }),
          method: fc.constantFrom("a", "b", "c"),
          batch: fc.integer({ min: 1, max: 3 }),
          // When the server sees it, within the request's lifetime.
          toServer: fc.integer({ min: 0, max: 3_000 }),
          toDone: fc.integer({ min: 0, max: 3_000 }),
          background: fc.boolean(),
        }),
        { minLength: 50, maxLength: 400 },
      ),
      (reqs) => {
        let now = 0;
        const b = new RpcBudget(PUBLIC_RPC_LIMITS, { clock: () => now });
        const arrivals: { at: number; method: string }[] = [];
        const pending: { at: number; ticket: RpcTicket }[] = [];
        const finishUpTo = (t: number) => {
          pending.sort((x, y) => x.at - y.at);
          while (pending.length && pending[0].at <= t) {
            const p = pending.shift()!;
            now = p.at;
            p.ticket.done();
          }
          now = t;
        };
        for (const r of reqs) {
          finishUpTo(now + r.gap);
          const methods = Array(r.batch).fill(r.method);
          for (;;) {
            const got = b.tryTake(methods, r.background ? "background" : "user");
            if ("ticket" in got) {
              for (const m of methods) arrivals.push({ at: now + r.toServer, method: m });
              pending.push({ at: now + r.toServer + r.toDone, ticket: got.ticket });
              break;
            }
            finishUpTo(now + Math.min(got.waitMs, 10_000));
          }
        }
        arrivals.sort((x, y) => x.at - y.at);
        for (let i = 0; i < arrivals.length; i++) {
          const win = arrivals.filter((a) =>
            a.at > arrivals[i].at - 10_000 && a.at <= arrivals[i].at
          );
          if (win.length > 100) return false;
          const same = win.filter((a) => a.method === arrivals[i].method);
          if (same.length > 40) return false;
        }
        return true;
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("refusal: found as itself, glued into a message by web3.js, or as a cause; not in other errors", () => {
  const busy = new RpcBusyError(2_500, "40 getLatestBlockhash limit reached per 10 s");
  assertEquals(refusalIn(busy), busy);
  const glued = refusalIn(new Error("failed to get recent blockhash: " + busy));
  assertEquals(glued?.retryAfterMs, 3_000);
  assert(glued?.message.includes("40 getLatestBlockhash limit reached"), glued?.message);
  assertEquals(refusalIn(new Error("outer", { cause: busy })), busy);
  assertEquals(refusalIn(new Error("failed to get recent blockhash: fetch failed")), null);
  assertEquals(refusalIn(null), null);
});
