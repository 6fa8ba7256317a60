/**
 * The auditor on a service that keeps writing: documents changed by the store after the audit's
 * head are settled against the log (no false mismatch), while a document edited behind the
 * store's back is still named.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { projectionKey } from "../../events/keys.ts";
import type { EventStore } from "../../events/store.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { built, cleanWorkload, confirmed } from "./fixtures.ts";
import { kvWith, withKvs } from "../support/kv.ts";

/** Builds for key k1 on the day the workload's later builds use: they change shared documents. */
function builder(store: EventStore, first: number) {
  let next = first;
  return async (n: number) => {
    for (let i = 0; i < n; i++, next++) {
      await store.append([{
        stream: `build-${next}`,
        expectedVersion: 0,
        events: [built(next, "k1", "p1", "2026-11-23"), confirmed(next)],
      }]);
    }
  };
}

/** Appends in the background until stopped, yielding to the audit between appends. */
function background(write: (n: number) => Promise<void>) {
  let stop = false;
  let count = 0;
  const done = (async () => {
    while (!stop) {
      await write(1);
      count++;
      await new Promise((r) => setTimeout(r, 0));
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await done;
      return count;
    },
  };
}

for (const mode of ["digest", "documents"] as const) {
  Deno.test(`an audit while the service writes finds no false mismatch (${mode})`, async () => {
    await withKvs(async (kv, scratch) => {
      const store = await cleanWorkload(kv);
      const write = builder(store, 1_000);
      if (mode === "documents") {
        // A live document stored with its properties in another order: the digests differ, and
        // the projection is compared document by document (equal as JSON).
        const key = projectionKey("purchase", ["p1"]);
        const doc = (await kv.get<Record<string, unknown>>(key)).value!;
        await kv.set(key, Object.fromEntries(Object.entries(doc).reverse()));
        await write(1);
      }
      const head = await store.head();
      const bg = background(builder(store, 5_000));
      const sink = new MemorySink();
      const summary = await runAudit({
        kv,
        scratch,
        sink,
        onPass: async (pass) => {
          // Between passes, so every pass meets documents that moved past the audit's head.
          await write(pass === "touches" ? 3 : 2);
        },
      });
      const writtenInBackground = await bg.stop();
      assert(writtenInBackground > 0, "the background writer never ran during the audit");
      assertEquals(sink.rows("exceptions"), []);
      assertEquals(summary.projections.mismatches, 0);
      assert(summary.ok);
      assertEquals(summary.projections.compared, mode);
      if (mode === "digest") assert(summary.projections.movedDuringAudit > 0);
      // The audit covers the log up to the head it started from, and nothing after it.
      assertEquals(summary.events, head.position);
      assertEquals(summary.head?.position, head.position);
      const builds = mode === "documents" ? [1, 2, 3, 4, 5, 6, 1_000] : [1, 2, 3, 4, 5, 6];
      assertEquals(summary.builds.builds, builds.length);
      assertEquals(sink.rows("builds").map((r) => r.buildId), builds);

      // Once quiet, the next audit sees every build, still clean.
      const after = new MemorySink();
      const scratch2 = await Deno.openKv(":memory:");
      const again = await runAudit({ kv, scratch: scratch2, sink: after });
      scratch2.close();
      assert(again.ok);
      const written = mode === "documents" ? 1 + 3 + 2 + 2 : 3 + 2 + 2;
      assertEquals(again.builds.builds, 6 + written + writtenInBackground);
    });
  });
}

Deno.test("a document edited behind the store's back mid-audit is caught, among concurrent writes", async () => {
  await withKvs(async (kv, scratch) => {
    const store = await cleanWorkload(kv);
    const write = builder(store, 1_000);
    const bg = background(builder(store, 5_000));
    const usage = projectionKey("usage", ["p1", "2026-11-23"]);
    const purchase = projectionKey("purchase", ["p1"]);
    const sink = new MemorySink();
    const summary = await runAudit({
      kv,
      scratch,
      sink,
      onPass: async (pass) => {
        if (pass !== "touches") return;
        await write(2);
        // One document the store also moves (usage of the day being built on), one it does not.
        const u = (await kv.get<Record<string, unknown>>(usage)).value!;
        await kv.set(usage, { ...u, tokens: 999 });
        const p = (await kv.get<Record<string, unknown>>(purchase)).value!;
        await kv.set(purchase, { ...p, amount: "1" });
        await write(1);
      },
    });
    await bg.stop();
    assertEquals(summary.projections.mismatches, 2);
    const named = sink.rows("exceptions")
      .filter((r) => r.kind === "projection_mismatch")
      .map((r) => String(r.detail).split(": ")[0])
      .sort();
    assertEquals(named, [JSON.stringify(purchase), JSON.stringify(usage)].sort());
    assert(!summary.ok);
  });
});

Deno.test("settling ends even when every settle read meets new writes (a service writing faster than the audit settles)", async () => {
  await withKvs(async (kv, scratch) => {
    const store = await cleanWorkload(kv);
    const write = builder(store, 1_000);
    // Each consistent read the settle makes is answered only after the service appended another
    // build: every read sees new events, and those touch new documents.
    let settling = false;
    let settleReads = 0;
    const busy = kvWith(kv, {
      getMany: (async (keys: Deno.KvKey[]) => {
        if (settling) {
          settleReads++;
          if (settleReads <= 400) await write(1);
        }
        return await kv.getMany(keys);
      }) as Deno.Kv["getMany"],
    });
    const sink = new MemorySink();
    let movedBeforeSettling = 0;
    const summary = await runAudit({
      kv: busy,
      scratch,
      sink,
      onPass: async (pass) => {
        if (pass === "touches") await write(2); // moves documents while the live side is read
        if (pass === "live") settling = true;
      },
    });
    movedBeforeSettling = summary.projections.movedDuringAudit;
    assert(movedBeforeSettling > 0, "documents moved during the audit");
    assertEquals(summary.projections.mismatches, 0);
    assert(summary.ok);
    // One read per document moved while the live side was read; settling what moved after would
    // have gone on for as long as the service wrote (here, 400 appends).
    assert(
      settleReads <= movedBeforeSettling,
      `${settleReads} settle reads for ${movedBeforeSettling} moved documents`,
    );
  });
});
