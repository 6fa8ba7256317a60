/**
 * The background reserve: anyone can drive user-priority RPC (portal purchase checks), and before
 * the reserve background work never ran while a user request waited, so a steady user load froze
 * the watcher and the rebroadcast. Simulated on an injected clock: every sleep is a timer the test
 * fires in time order, so the outcome is the same on any machine.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { PUBLIC_RPC_LIMITS, RpcBudget, RpcBusyError } from "../../src/solana/rpc-budget.ts";

/** A clock that moves only from timer to timer. */
function simulation() {
  let now = 0;
  let timers: { at: number; fire: () => void }[] = [];
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      const t = { at: now + ms, fire: resolve };
      timers.push(t);
      signal?.addEventListener("abort", () => {
        timers = timers.filter((x) => x !== t);
        resolve();
      }, { once: true });
    });
  return {
    clock: () => now,
    sleep,
    /** Fires timers in order until `end`; each fire runs what it wakes before the next. */
    async runUntil(end: number) {
      for (;;) {
        await new Promise((r) => setTimeout(r, 0));
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > end) break;
        timers.shift();
        now = Math.max(now, next.at);
        next.fire();
      }
      now = end;
    },
  };
}

function flood(reserve?: number) {
  const sim = simulation();
  const budget = new RpcBudget(PUBLIC_RPC_LIMITS, {
    clock: sim.clock,
    sleep: sim.sleep,
    // Callers that wait for as long as it takes: a user request is always waiting.
    userWaitMs: 600_000,
    ...(reserve === undefined ? {} : { backgroundReserve: reserve }),
  });
  const METHOD = "getSignaturesForAddress";
  let stop = false;
  const user: number[] = [];
  const background: number[] = [];
  // 60 callers each asking again as soon as they are answered: more than the limit frees at once,
  // so a user is always waiting and the method always at its limit.
  for (let i = 0; i < 60; i++) {
    (async () => {
      while (!stop) {
        try {
          const ticket = await budget.acquire([METHOD], "user");
          user.push(sim.clock());
          await sim.sleep(100);
          ticket.done();
        } catch (e) {
          if (!(e instanceof RpcBusyError)) throw e;
          await sim.sleep(50);
        }
      }
    })();
  }
  // The watcher: one call at a time, a sweep's worth of them back to back.
  (async () => {
    while (!stop) {
      const ticket = await budget.acquire([METHOD], "background");
      background.push(sim.clock());
      await sim.sleep(100);
      ticket.done();
      await sim.sleep(200);
    }
  })();
  return {
    async run(ms: number) {
      await sim.runUntil(ms);
      stop = true;
    },
    user,
    background,
  };
}

const inWindow = (times: number[], from: number) =>
  times.filter((t) => t >= from && t < from + 10_000).length;

Deno.test("budget reserve: given users always waiting at a method's limit, then background still gets its reserve of every window", async () => {
  const f = flood();
  await f.run(60_000);
  // It waits one window for users, then keeps 10% of the 40 per 10 s: 4 in every window.
  assert(f.background.length > 0, "background never ran under the user load");
  assert(f.background[0] <= 10_100, `first background call at ${f.background[0]} ms`);
  for (let from = 20_000; from < 60_000; from += 10_000) {
    assert(
      inWindow(f.background, from) >= 4,
      `${inWindow(f.background, from)} background calls in [${from}, ${from + 10_000})`,
    );
    // Users keep the rest: at least 36 of 40, and together never over the limit.
    assert(inWindow(f.user, from) >= 30, `${inWindow(f.user, from)} user calls`);
  }
});

Deno.test("budget reserve: with the reserve set to 0, users first as before: background waits for as long as users do", async () => {
  const f = flood(0);
  await f.run(60_000);
  assertEquals(f.background.length, 0);
  assert(f.user.length > 200, `${f.user.length} user calls`);
});

Deno.test("budget reserve config: 0.1 by default, RPC_BUDGET_BACKGROUND_RESERVE sets it, a bad value is named", () => {
  assertEquals(loadConfig({}).rpcBackgroundReserve, 0.1);
  assertEquals(loadConfig({ RPC_BUDGET_BACKGROUND_RESERVE: "0" }).rpcBackgroundReserve, 0);
  let e: unknown = null;
  try {
    loadConfig({ RPC_BUDGET_BACKGROUND_RESERVE: "-1" });
  } catch (err) {
    e = err;
  }
  assert(e instanceof ConfigError, String(e));
  assertMatch(e.problems.join("\n"), /RPC_BUDGET_BACKGROUND_RESERVE/);
});
