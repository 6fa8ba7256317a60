/**
 * Incremental audits: from a clean audit's checkpoint, only what the log gained is audited, and
 * the tables equal those of a full audit of the same log; a change before the checkpoint is
 * caught.
 */
import { assert, assertEquals, assertMatch, assertRejects } from "../support/assert.ts";
import { projectionKey } from "../../events/keys.ts";
import { EventStore } from "../../events/store.ts";
import {
  type Checkpoint,
  MAX_INCREMENTAL_EVENTS,
  TooFarBehindError,
} from "../../src/audit/state.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { isSealed, rewriteEvent } from "../events/support/tamper.ts";
import { type Audited, auditInto, more, tablesOf, withIncrementalLog } from "./fixtures.ts";

const audit = (kv: Deno.Kv, dir: string, name: string, from?: Audited) =>
  auditInto(kv, dir, name, { from });
const tables = tablesOf;

const withLog = (fn: (kv: Deno.Kv, store: EventStore, dir: string) => Promise<void>) =>
  withIncrementalLog("tcb-incremental-", fn);

Deno.test("an incremental audit writes the tables a full audit writes, and chains on", async () => {
  await withLog(async (kv, store, dir) => {
    const first = await audit(kv, dir, "first");
    const cp = first.summary.checkpoint as Checkpoint;
    assert(cp, "a clean audit writes a checkpoint");
    assertEquals(cp.position, (await store.head()).position);
    assertEquals(cp.hash, (await store.head()).hash);

    await more(store, 13, 20);
    const inc = await audit(kv, dir, "inc", first);
    const full = await audit(kv, dir, "full");
    assertEquals(inc.summary.projections.compared, "incremental");
    assertEquals(inc.summary.from?.position, cp.position);
    assert(inc.summary.projections.documents > 0);
    assert(inc.summary.chain.ok && full.summary.chain.ok);
    assertEquals(inc.summary.projections.mismatches, 0);
    assertEquals(tables(inc), tables(full));
    assertEquals(inc.summary.builds, full.summary.builds);
    assertEquals(inc.summary.purchases, full.summary.purchases);
    assertEquals(inc.summary.exceptions, full.summary.exceptions);
    assertEquals(inc.summary.checkpoint?.position, full.summary.checkpoint?.position);
    assertEquals(inc.summary.checkpoint?.hash, full.summary.checkpoint?.hash);

    // And again from the incremental audit's own checkpoint.
    await more(store, 21, 30);
    const inc2 = await audit(kv, dir, "inc2", inc);
    const full2 = await audit(kv, dir, "full2");
    assertEquals(tables(inc2), tables(full2));
    assertEquals(inc2.summary.builds, full2.summary.builds);
    assert(inc2.summary.ok === full2.summary.ok);
  });
});

Deno.test("an incremental audit catches an event changed before the checkpoint", async () => {
  for (const where of ["segment", "tail"] as const) {
    await withLog(async (kv, store, dir) => {
      const first = await audit(kv, dir, "first");
      const cp = first.summary.checkpoint!;
      await more(store, 13, 14);
      const position = where === "segment" ? 3 : cp.position;
      if (where === "segment") assert(await isSealed(kv, position));
      await rewriteEvent(kv, position, (e) => ({ ...e, at: e.at + 1 }));
      const inc = await audit(kv, dir, "inc", first);
      assertEquals(inc.summary.chain.ok, false, `${where}: not caught`);
      assertEquals(inc.summary.checkpoint, null);
      const broken = inc.sink.rows("exceptions").filter((r) => r.kind === "chain_broken");
      // The whole chain is checked again: the changed event is named at its position.
      assertEquals(broken[0].position, position);
      assertMatch(String(broken[0].detail), /hash does not match/);
    });
  }
});

Deno.test("an incremental audit names a touched document edited behind the store's back", async () => {
  await withLog(async (kv, store, dir) => {
    const first = await audit(kv, dir, "first");
    await more(store, 13, 14);
    const key = projectionKey("build", [13]);
    const doc = (await kv.get<Record<string, unknown>>(key)).value!;
    await kv.set(key, { ...doc, feeLamports: "1" });
    const inc = await audit(kv, dir, "inc", first);
    assertEquals(inc.summary.projections.mismatches, 1);
    const [m] = inc.sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch");
    assertMatch(String(m.detail), /^\["p","build",13\]: feeLamports: live "1"/);
  });
});

Deno.test("an incremental audit names a touched document deleted or stored as bytes behind the store's back", async () => {
  await withLog(async (kv, store, dir) => {
    const first = await audit(kv, dir, "first");
    await more(store, 13, 14);
    const gone = projectionKey("build", [14]);
    const bytes = projectionKey("build_by_mint", ["Mint13"]);
    assert((await kv.get(gone)).value !== null && (await kv.get(bytes)).value !== null);
    await kv.delete(gone);
    await kv.set(bytes, new Uint8Array([1, 2]));
    const inc = await audit(kv, dir, "inc", first);
    const named = inc.sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch")
      .map((r) => String(r.detail).split(": ")[0]).sort();
    assertEquals(named, [JSON.stringify(gone), JSON.stringify(bytes)].sort());
    assertEquals(inc.summary.checkpoint, null);
  });
});

Deno.test("an incremental audit too far behind its checkpoint refuses, asking for a full audit", async () => {
  await withLog(async (kv, _store, dir) => {
    const first = await audit(kv, dir, "first");
    const cp = first.summary.checkpoint!;
    // As if MAX_INCREMENTAL_EVENTS and more had been appended since.
    const behind = { ...cp, position: cp.position - MAX_INCREMENTAL_EVENTS - 1 };
    const scratch = await Deno.openKv(":memory:");
    try {
      await assertRejects(
        () => runAudit({ kv, scratch, sink: new MemorySink(), from: behind }),
        TooFarBehindError,
        "run a full audit",
      );
    } finally {
      scratch.close();
    }
  });
});
