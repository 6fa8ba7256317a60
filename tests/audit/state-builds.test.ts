/**
 * The audit's state keeps its builds 64 to a KV value (folds.ts, projections/packed.ts): given
 * builds spread over several packs, when a full audit has run, then the state holds one entry a
 * pack, and the builds read back (`listBuildPacks`, `readBuilds`) are the builds, in build order; a
 * checkpoint whose state is laid out the old way is refused with the way on.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { withKvs } from "../support/kv.ts";
import { EventStore } from "../../events/store.ts";
import { PROJECTIONS } from "../../events/keys.ts";
import { allProjections } from "../../projections/index.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { AUDIT_BUILD, BUILDS_PER_PACK } from "../../src/audit/folds.ts";
import { buildPack, listBuildPacks, readBuilds } from "../../src/audit/state-builds.ts";
import { CHECKPOINT_VERSION, readCheckpoint } from "../../src/audit/checkpoint.ts";
import { built, confirmed, DAY1, purchaseWithKey } from "./fixtures.ts";

/** Two in some packs, and more packs than `readBuilds` reads at once. */
const FAR = Array.from({ length: 45 }, (_, i) => 1000 + i * 64);
const IDS = [1, 2, 63, 64, 130, 131, 500, ...FAR];

Deno.test("given builds in several packs, when audited, then the state holds a pack each and reads them back in build order", async () => {
  await withKvs(async (kv, scratch) => {
    const store = new EventStore(kv, { projections: allProjections, now: () => DAY1 });
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (const id of [...IDS].reverse()) {
      await store.append([{
        stream: `build-${id}`,
        expectedVersion: "any",
        events: [built(id, "k1", "p1", "2026-11-22")],
      }]);
    }
    await store.append([{ stream: "build-1", expectedVersion: "any", events: [confirmed(1)] }]);
    const summary = await runAudit({
      kv,
      scratch,
      sink: new MemorySink(),
      now: () => 0,
    });
    assert(summary.projections.mismatches === 0 && summary.chain.ok);

    const entries = [];
    for await (const e of scratch.list({ prefix: [...PROJECTIONS, AUDIT_BUILD] })) {
      entries.push(e.key.at(-1));
    }
    const packs = [...new Set(IDS.map((id) => Math.floor(id / BUILDS_PER_PACK)))];
    assertEquals(entries, packs);

    const all = [];
    for await (const { pack, builds } of listBuildPacks(scratch, { batchSize: 1 })) {
      for (const b of builds) {
        assertEquals(buildPack(b.buildId), pack);
        all.push(b.buildId);
      }
    }
    assertEquals(all, IDS);

    const asked = [FAR.at(-1)!, 500, 3, 1, 131, ...FAR.slice(0, 44).reverse()];
    const read = await readBuilds(scratch, asked);
    assertEquals(read.map((b) => b?.buildId ?? null), asked.map((id) => id === 3 ? null : id));
    assertEquals(read[3]?.status, "confirmed");
  });
});

Deno.test("given a checkpoint of the layout before packs, when an incremental audit reads it, then it is refused and a full audit is asked for", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-old-checkpoint-" });
  try {
    const old = { version: CHECKPOINT_VERSION - 1, position: 1, hash: "h" };
    await Deno.writeTextFile(`${dir}/checkpoint.json`, JSON.stringify(old));
    let error = "";
    await readCheckpoint(dir).catch((e) => (error = String(e)));
    assert(error.includes(`version ${CHECKPOINT_VERSION - 1}`), error);
    assert(error.includes("run a full audit"), error);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
