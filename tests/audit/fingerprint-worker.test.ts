/**
 * The incremental audit's prefix proof in a worker (the audit of a KV file): given a checkpoint,
 * when nothing before it changed, then the audit is clean and writes the next checkpoint; when an
 * event in a sealed segment before it is rewritten, then the worker's fingerprint catches it.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { EventStore } from "../../events/store.ts";
import { allProjections } from "../../projections/index.ts";
import { isSealed, rewriteEvent } from "../events/support/tamper.ts";
import { type Audited, auditInto, built, confirmed, DAY1, purchaseWithKey } from "./fixtures.ts";

Deno.test("the prefix proof runs in a worker on a KV file and catches a rewritten segment", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-fingerprint-" });
  const path = `${dir}/service.sqlite3`;
  const kv = await Deno.openKv(path);
  const store = new EventStore(kv, {
    projections: allProjections,
    sealBytes: 2048,
    now: () => DAY1,
  });
  const audit = (name: string, from?: Audited) => auditInto(kv, dir, name, { from, kvPath: path });
  const more = async (from: number, to: number) => {
    for (let i = from; i <= to; i++) {
      await store.append([{
        stream: `build-${i}`,
        expectedVersion: 0,
        events: [built(i, "k1", "p1", "2026-11-22"), confirmed(i)],
      }]);
    }
  };
  try {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    await more(1, 12);
    const first = await audit("first");
    assert(first.summary.checkpoint, "a clean audit writes a checkpoint");
    await more(13, 14);
    const clean = await audit("clean", first);
    assertEquals(clean.summary.chain.ok, true);
    assert(clean.summary.checkpoint, "an incremental audit of an unchanged prefix checkpoints");

    assert(await isSealed(kv, 3));
    await rewriteEvent(kv, 3, (e) => ({ ...e, at: e.at + 1 }));
    const inc = await audit("inc", first);
    assertEquals(inc.summary.chain.ok, false);
    assertEquals(inc.summary.checkpoint, null);
    const broken = inc.sink.rows("exceptions").filter((r) => r.kind === "chain_broken");
    assertMatch(String(broken[0].detail), /sealed log up to \d+ changed/);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
