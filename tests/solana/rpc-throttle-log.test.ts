/** A 429 / -32005 storm is one warning a minute with counts, on an injected clock. */
import { assertEquals } from "../support/assert.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";
import { ThrottleLog } from "../../src/solana/rpc-throttle-log.ts";

Deno.test("throttle log: given 500 throttled answers within a minute, then one line; the next minute's line counts what was held back", () => {
  let now = 5_000_000;
  const logger = memoryLogger();
  const log = new ThrottleLog(logger, () => now);
  for (let i = 0; i < 500; i++) {
    log.note({
      kind: i % 5 ? "429" : "-32005",
      methods: [i % 2 ? "getTransaction" : "getSignaturesForAddress"],
      retryAfterMs: 2_500,
    });
    now += 100; // 50 s in all
  }
  assertEquals(logger.lines.length, 1);
  const first = JSON.parse(logger.lines[0]);
  assertEquals([first.level, first.answers, first.retryAfterS], ["warn", 1, 3]);

  now += 10_000; // a minute after the first line
  log.note({ kind: "429", methods: ["getBlockHeight"], retryAfterMs: null });
  assertEquals(logger.lines.length, 2);
  const second = JSON.parse(logger.lines[1]);
  assertEquals(second.answers, 500);
  assertEquals(second.byKind, { "429": 401, "-32005": 99 });
  assertEquals(second.byMethod, {
    getTransaction: 250,
    getSignaturesForAddress: 249,
    getBlockHeight: 1,
  });
  assertEquals(second.retryAfterS, null);
});
