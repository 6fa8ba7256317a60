/**
 * The two-cycle form of `deno task reliability`: the service killed with SIGKILL twice under
 * mixed load (metadata, builds, relays, verification) and restarted on its KV; every request with
 * an unknown outcome retried with its Idempotency-Key. No acknowledged write lost, none counted
 * twice, no 5xx, the audit (with the chain) clean, and retries ran within 5 s of the restart.
 */
import { runKillCycles } from "../../bench/lib/kill-cycles.ts";
import { assert, assertEquals } from "../support/assert.ts";

Deno.test("kill -9 twice under mixed load: nothing acknowledged lost, nothing counted twice, no 5xx, audit clean", async () => {
  const r = await runKillCycles({ cycles: 2, clients: 6, cycleMs: 3_000, keys: 2 });
  const context = JSON.stringify(r);
  assert(r.acknowledged.metadata + r.acknowledged.builds + r.acknowledged.relays > 0, context);
  assertEquals(r.lostAcknowledged, 0, context);
  assertEquals(r.doubleCounts, 0, context);
  assertEquals(r.serverErrors, 0, context);
  assertEquals(r.clientErrors, 0, context);
  assertEquals(r.audit.code, 0, context);
  assert(r.retryWaitMs.max === null || r.retryWaitMs.max <= 5_000, context);
});
