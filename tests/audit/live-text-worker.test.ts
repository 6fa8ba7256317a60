/**
 * The incremental audit of a KV file reads the live documents the new events touched in one
 * snapshot on the other core (live-text-worker.ts): given a checkpoint and new events, when the
 * live documents are as the log explains, then none is read through the KV one by one and the
 * tables are a full audit's; when some differ, then exactly those are settled through the KV and
 * only the real mismatches are named; when the service writes while the snapshot is taken, then
 * the documents it moved are settled against the log, not reported.
 */
import { kvWith } from "../support/kv.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { projectionKey, PROJECTIONS } from "../../events/keys.ts";
import { allProjections } from "../../projections/index.ts";
import { replayFrom } from "../../src/audit/checkpoint.ts";
import { liveTextsInWorker } from "../../src/audit/live-text-worker.ts";
import { auditInto, more, tablesOf, withIncrementalLog } from "./fixtures.ts";

/** `kv`, counting the projection documents read through it (`get` and `getMany`). */
function counting(kv: Deno.Kv) {
  const reads = { docs: 0 };
  const isDoc = (k: Deno.KvKey) => k[0] === PROJECTIONS[0];
  const wrapped = kvWith(kv, {
    getMany: ((keys: Deno.KvKey[], o?: { consistency?: Deno.KvConsistencyLevel }) => {
      reads.docs += keys.filter(isDoc).length;
      return kv.getMany(keys, o);
    }) as Deno.Kv["getMany"],
    get: ((key: Deno.KvKey, o?: { consistency?: Deno.KvConsistencyLevel }) => {
      if (isDoc(key)) reads.docs++;
      return kv.get(key, o);
    }) as Deno.Kv["get"],
  });
  return { kv: wrapped, reads };
}

const pathOf = (dir: string) => `${dir}/service.sqlite3`;

Deno.test("an incremental audit of a KV file compares the touched documents from one snapshot, none read one by one", async () => {
  await withIncrementalLog("tcb-live-text-", async (kv, store, dir) => {
    const first = await auditInto(kv, dir, "first", { kvPath: pathOf(dir) });
    assert(first.summary.checkpoint, "a clean audit writes a checkpoint");
    await more(store, 13, 20);

    const fromFile = counting(kv);
    const inc = await auditInto(fromFile.kv, dir, "inc", { from: first, kvPath: pathOf(dir) });
    const throughKv = counting(kv);
    const incKv = await auditInto(throughKv.kv, dir, "inc-kv", { from: first });
    const full = await auditInto(kv, dir, "full");

    assert(inc.summary.projections.documents > 20);
    assertEquals(fromFile.reads.docs, 0);
    // Through the KV every touched document is read once.
    assertEquals(throughKv.reads.docs, incKv.summary.projections.documents);
    for (const a of [inc, incKv]) {
      assertEquals(a.summary.projections.mismatches, 0);
      assert(a.summary.chain.ok);
      assertEquals(tablesOf(a), tablesOf(full));
    }
  });
});

Deno.test("documents whose text differs, or that the snapshot does not read, are settled through the KV: real mismatches named, a property order passed", async () => {
  await withIncrementalLog("tcb-live-text-", async (kv, store, dir) => {
    const first = await auditInto(kv, dir, "first", { kvPath: pathOf(dir) });
    await more(store, 13, 15);
    const edit = async (id: number, change: (doc: Record<string, unknown>) => unknown) => {
      const key = projectionKey("build", [id]);
      await kv.set(key, change((await kv.get<Record<string, unknown>>(key)).value!));
    };
    await edit(13, (doc) => ({ ...doc, feeLamports: "1" }));
    // The same fields in another order: another text, the same value.
    await edit(14, (doc) => Object.fromEntries(Object.entries(doc).reverse()));
    // A date: the snapshot's transcoder does not take it.
    await edit(15, (doc) => ({ ...doc, seenAt: new Date(0) }));

    const counted = counting(kv);
    const inc = await auditInto(counted.kv, dir, "inc", { from: first, kvPath: pathOf(dir) });
    assertEquals(counted.reads.docs, 3);
    assertEquals(inc.summary.projections.mismatches, 2);
    const named = inc.sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch")
      .map((r) => String(r.detail)).sort();
    assertMatch(named[0], /^\["p","build",13\]: feeLamports: live "1"/);
    assertMatch(named[1], /^\["p","build",15\]: seenAt: live \{\} rebuilt null/);
  });
});

Deno.test("a document deleted, brought back, stored as null or as bytes behind the store's back is named", async () => {
  await withIncrementalLog("tcb-live-text-", async (kv, store, dir) => {
    const first = await auditInto(kv, dir, "first", { kvPath: pathOf(dir) });
    await more(store, 13, 16);
    // Builds 13 and 14 are confirmed: the log leaves no open_build document for them.
    assertEquals((await kv.get(projectionKey("open_build", [13]))).value, null);
    await kv.set(projectionKey("open_build", [13]), { buildId: 13 });
    await kv.delete(projectionKey("build", [14]));
    await kv.set(projectionKey("build", [15]), null);
    await kv.set(projectionKey("build", [16]), new TextEncoder().encode("{}"));

    const counted = counting(kv);
    const inc = await auditInto(counted.kv, dir, "inc", { from: first, kvPath: pathOf(dir) });
    const named = inc.sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch")
      .map((r) => String(r.detail).split(": ")[0]).sort();
    assertEquals(named, [
      '["p","build",14]',
      '["p","build",15]',
      '["p","build",16]',
      '["p","open_build",13]',
    ]);
    assertEquals(counted.reads.docs, 4);
  });
});

Deno.test("a snapshot older than the audit's head (another file) proves nothing: every document is settled through the KV", async () => {
  await withIncrementalLog("tcb-live-text-", async (kv, store, dir) => {
    const first = await auditInto(kv, dir, "first", { kvPath: pathOf(dir) });
    await more(store, 13, 16);
    // A copy of the file as it was here: its documents are what the log explains so far.
    for (const f of ["", "-wal", "-shm"]) {
      await Deno.copyFile(pathOf(dir) + f, `${dir}/stale.sqlite3${f}`).catch(() => {});
    }
    await more(store, 17, 18);
    const key = projectionKey("build", [13]);
    await kv.set(key, { ...(await kv.get<Record<string, unknown>>(key)).value, feeLamports: "1" });

    await Deno.copyFile(first.state, `${dir}/inc.sqlite3`);
    const scratch = await Deno.openKv(`${dir}/inc.sqlite3`);
    const stale = liveTextsInWorker(`${dir}/stale.sqlite3`);
    try {
      const report = await replayFrom(kv, scratch, allProjections, [], first.summary.checkpoint!, {
        liveTexts: (keys) => stale.read(keys),
      });
      assertEquals(report.mismatchCount, 1);
    } finally {
      stale.end();
      scratch.close();
    }
  });
});

for (const revert of [false, true]) {
  const name = revert
    ? "a document the service moved before the snapshot, set back to its value at the head, is named"
    : "documents the service moves before the snapshot are settled against the log, never reported";
  Deno.test(name, async () => {
    await withIncrementalLog("tcb-live-text-", async (kv, store, dir) => {
      const first = await auditInto(kv, dir, "first", { kvPath: pathOf(dir) });
      await more(store, 13, 16);
      await Deno.copyFile(first.state, `${dir}/inc.sqlite3`);
      const scratch = await Deno.openKv(`${dir}/inc.sqlite3`);
      const worker = liveTextsInWorker(pathOf(dir));
      // Touched by the new events, and again by the ones after the audit's head.
      const usage = projectionKey("usage", ["p1", "2026-11-22"]);
      try {
        let written = false;
        const checkpoint = first.summary.checkpoint!;
        const report = await replayFrom(kv, scratch, allProjections, [], checkpoint, {
          liveTexts: async (keys) => {
            assert(keys.some((k) => JSON.stringify(k) === JSON.stringify(usage)));
            const atHead = (await kv.get(usage)).value;
            // After the audit's head: builds on the same key and day move the shared documents.
            await more(store, 17, 18);
            if (revert) await kv.set(usage, atHead);
            written = true;
            return await worker.read(keys);
          },
        });
        assert(written);
        assert(report.chain.ok);
        assert(report.moved > 0, "no document moved after the head");
        assertEquals(report.mismatchCount, revert ? 1 : 0);
      } finally {
        worker.end();
        scratch.close();
      }
    });
  });
}

Deno.test("a path that is not a KV file this reader knows answers null: the documents are then settled through the KV", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-live-text-" });
  const worker = liveTextsInWorker(`${dir}/not-a-kv.txt`);
  try {
    await Deno.writeTextFile(`${dir}/not-a-kv.txt`, "plain text\n");
    assertEquals(await worker.read([["p", "build", 1]]), null);
  } finally {
    worker.end();
    await Deno.remove(dir, { recursive: true });
  }
});
