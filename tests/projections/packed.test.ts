/**
 * A fold stored many documents to a KV value (projections/packed.ts), as the audit keeps its
 * builds: given any events, folded through the cached, writing fold (ProjectionFolder) with
 * evictions and reads back, the packs listed in key order hold exactly the documents of the
 * unpacked fold, in its key order; a pack from elsewhere is never changed in place, one the fold
 * made is; `changedIn` names the documents events changed; and the fold's cache counts a pack as the documents it holds.
 */
import fc from "fast-check";
import { countingSets } from "../support/kv.ts";
import { ProjectionFolder, SETTLED_BATCH } from "../../projections/folder.ts";
import { changedIn, docIn, type Pack, packed, packKey } from "../../projections/packed.ts";
import type { Projection } from "../../events/projection.ts";
import type { StoredEvent } from "../../events/types.ts";
import { projectionKey, PROJECTIONS } from "../../events/keys.ts";
import { assert, assertEquals } from "../support/assert.ts";

interface Tally {
  id: Deno.KvKeyPart;
  n: number;
  last: number;
}

/** Counts its events per id; "Drop" deletes the document; three touches settle it. */
const tally: Projection<Tally> = {
  name: "tally",
  keysOf: (e) => [[(e.data as { id: Deno.KvKeyPart }).id]],
  evolve: (doc, e, [id]) =>
    (e.type as string) === "Drop" ? null : { id, n: (doc?.n ?? 0) + 1, last: e.position },
  settled: (doc) => doc.n >= 3,
};

const event = (id: Deno.KvKeyPart, position: number, type = "Touch") =>
  ({ stream: "s", position, type, data: { id }, at: 0, v: 1 }) as unknown as StoredEvent;

/** Every document under the projection's prefix, in key order. */
async function listed<D>(kv: Deno.Kv, name: string): Promise<[Deno.KvKey, D][]> {
  const out: [Deno.KvKey, D][] = [];
  for await (const e of kv.list<D>({ prefix: [...PROJECTIONS, name] })) {
    out.push([e.key.slice(PROJECTIONS.length + 1), e.value]);
  }
  return out;
}

async function fold(p: Projection, events: StoredEvent[], cacheSize: number) {
  const kv = await Deno.openKv(":memory:");
  const folder = new ProjectionFolder(kv, [p], { cacheSize });
  for (const e of events) await folder.apply(e);
  await folder.flush();
  return kv;
}

Deno.test("given any events, when folded packed with a small cache, then the packs list the unpacked fold's documents in its order", async () => {
  const id = fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: 400 }) },
    fc.integer({ min: -70, max: -1 }),
    fc.constantFrom(2.5, 1e12, -0, NaN, Infinity, -Infinity, "odd", "other"),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(id, fc.boolean(), fc.nat(19)), { maxLength: 300 }),
      fc.constantFrom(1, 4, 64),
      fc.constantFrom(3, 50, 10_000),
      async (steps, size, cacheSize) => {
        const events = steps.map(([i, _, kind], n) =>
          event(i, n + 1, kind === 0 ? "Drop" : "Touch")
        );
        const plain = await fold(tally, events, 10_000);
        const packs = await fold(packed(tally, size), events, cacheSize);
        try {
          const expected = (await listed<Tally>(plain, "tally")).map(([k, d]) => [k[0], d]);
          const stored = await listed<Pack<Tally>>(packs, "tally");
          const got = stored.flatMap(([, p]) => p.ids.map((i, j) => [i, p.docs[j]]));
          assertEquals(got, expected);
          for (const [key, pack] of stored) {
            assert(pack.ids.length > 0, "no empty pack is stored");
            for (const i of pack.ids) assertEquals(packKey([i], size), key);
          }
        } finally {
          plain.close();
          packs.close();
        }
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("given a pack, when an event changes one of its documents, then a new pack is made and the old one is as it was", () => {
  const p = packed(tally, 64);
  const made = p.evolve(p.evolve(null, event(3, 1), [0]), event(5, 2), [0])!;
  // Frozen: changing it in place would throw.
  const two: Pack<Tally> = {
    ids: Object.freeze(made.ids) as Deno.KvKeyPart[],
    docs: Object.freeze(made.docs) as Tally[],
  };
  const three = p.evolve(two, event(3, 3), [0])!;
  assertEquals(two.docs.map((d) => d.n), [1, 1]);
  assertEquals(three.ids, [3, 5]);
  assertEquals(three.docs.map((d) => d.n), [2, 1]);
  assert(three.docs[1] === two.docs[1], "the untouched document is the same object");
  assertEquals(p.evolve(p.evolve(null, event(7, 4), [0]), event(7, 5, "Drop"), [0]), null);
});

Deno.test("given a pack before and after events, when changedIn compares them, then it names the documents changed, added and removed, and no other", () => {
  const p = packed(tally, 64);
  let made: Pack<Tally> | null = null;
  for (const [i, id] of [1, 2, 3].entries()) made = p.evolve(made, event(id, i + 1), [0]);
  // As the incremental audit has it: read back from its state, not made by this fold.
  const before = structuredClone(made);
  let after = p.evolve(before, event(2, 10), [0]);
  after = p.evolve(after, event(9, 11), [0]);
  after = p.evolve(after, event(3, 12, "Drop"), [0]);
  const changed = changedIn(before, after);
  assertEquals(
    changed.map((c) => [c.before?.id ?? null, c.after?.id ?? null, c.after?.n ?? null]),
    [[2, 2, 2], [null, 9, 1], [3, null, null]],
  );
  assert(docIn(after, 1) === docIn(before, 1), "an untouched document is the same object");
  assertEquals(before!.ids, [1, 2, 3], "the pack read back is as it was");
  assertEquals(changedIn(null, null), []);
});

Deno.test("given a pack the fold made, when an event changes it, then it is changed in place; a copy of it from elsewhere is not", () => {
  const p = packed(tally, 64);
  const made = p.evolve(null, event(3, 1), [0])!;
  const elsewhere = structuredClone(made);
  assert(p.evolve(made, event(5, 2), [0]) === made, "the fold's own pack, changed in place");
  assertEquals(made.ids, [3, 5]);
  const copied = p.evolve(elsewhere, event(5, 3), [0])!;
  assert(copied !== elsewhere, "a pack from elsewhere is copied");
  assertEquals(elsewhere.ids, [3]);
  assertEquals(copied.ids, [3, 5]);
  // The copy is the fold's own from then on.
  assert(p.evolve(copied, event(7, 4), [0]) === copied);
});

Deno.test("given packs of 64, when a cache of 100 documents folds three packs' worth, then packs are written out before the flush", async () => {
  const state = await Deno.openKv(":memory:");
  try {
    const { kv, sets } = countingSets(state);
    // Two touches each: none settles, so only the cache's size can send them out.
    const folder = new ProjectionFolder(kv, [packed(tally, 64)], { cacheSize: 100 });
    let position = 0;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 192; i++) await folder.apply(event(i, ++position));
    }
    assert(sets() > 0, "three packs of 64 are over a cache of 100 documents");
    await folder.flush();
    const stored = await listed<Pack<Tally>>(state, "tally");
    assertEquals(stored.map(([k, p]) => [k, p.docs.every((d) => d.n === 2)]), [
      [[0], true],
      [[1], true],
      [[2], true],
    ]);
  } finally {
    state.close();
  }
});

Deno.test("given a pack that fills and settles, when the settled documents reach a batch, then it is written before the flush", async () => {
  const state = await Deno.openKv(":memory:");
  try {
    const folder = new ProjectionFolder(state, [packed(tally, 64)], { cacheSize: 100_000 });
    // Two batches: the first is committed by the time the second is sent.
    const packs = 2 * Math.ceil(SETTLED_BATCH / 64);
    let position = 0;
    for (let i = 0; i < packs * 64; i++) {
      for (let t = 0; t < 3; t++) await folder.apply(event(i, ++position));
    }
    const early = await listed<Pack<Tally>>(state, "tally");
    assert(early.length > 0, "settled packs written before the flush");
    await folder.flush();
    assertEquals((await listed(state, "tally")).length, packs);
    assertEquals(
      (await state.get<Pack<Tally>>(projectionKey("tally", [0]))).value?.docs[63].n,
      3,
    );
  } finally {
    state.close();
  }
});
