/**
 * ProjectionFolder's preload (projections/folder.ts), as the incremental audit uses it: every
 * document the new events touch is read once, up front, absent ones included, so folding the
 * events reads nothing more.
 */
import { countingSets, kvWith } from "../support/kv.ts";
import { ProjectionFolder, SETTLED_BATCH } from "../../projections/folder.ts";
import type { Projection } from "../../events/projection.ts";
import type { StoredEvent } from "../../events/types.ts";
import { projectionKey } from "../../events/keys.ts";
import { assertEquals } from "../support/assert.ts";

/** Counts touches per stream: one document per stream. */
const counter: Projection<{ n: number }> = {
  name: "counter",
  keysOf: (e) => [[e.stream]],
  evolve: (doc, _e) => ({ n: (doc?.n ?? 0) + 1 }),
};

const event = (stream: string, position: number) =>
  ({ stream, position, type: "KeyIssued", data: {}, at: 0, v: 1 }) as unknown as StoredEvent;

/** The KV, with a count of the single-key reads made through it. */
function counting(kv: Deno.Kv): { kv: Deno.Kv; gets: () => number } {
  let gets = 0;
  const proxy = kvWith(kv, {
    get: ((key: Deno.KvKey) => {
      gets++;
      return kv.get(key);
    }) as Deno.Kv["get"],
  });
  return { kv: proxy, gets: () => gets };
}

Deno.test("given a state with one document, when the folder preloads it and a new one, then folding reads nothing more and both land", async () => {
  const state = await Deno.openKv(":memory:");
  try {
    const a = projectionKey("counter", ["a"]);
    const b = projectionKey("counter", ["b"]);
    await state.set(a, { n: 5 });
    const { kv, gets } = counting(state);
    const folder = new ProjectionFolder(kv, [counter], { existing: true });

    const before = await folder.preload([a, b]);
    assertEquals(before, [{ n: 5 }, null]);
    for (const [i, s] of ["a", "b", "b"].entries()) await folder.apply(event(s, i + 1));
    await folder.flush();

    assertEquals(gets(), 0, "no document read one by one while folding");
    assertEquals((await state.get(a)).value, { n: 6 });
    assertEquals((await state.get(b)).value, { n: 2 });
  } finally {
    state.close();
  }
});

Deno.test("given more documents than one read takes, when the folder preloads them, then each comes back in its place", async () => {
  const state = await Deno.openKv(":memory:");
  try {
    const keys = Array.from({ length: 45 }, (_, i) => projectionKey("counter", [`s${i}`]));
    // Every third is stored; the rest are absent.
    for (let i = 0; i < keys.length; i += 3) await state.set(keys[i], { n: i });
    const folder = new ProjectionFolder(state, [counter], { existing: true });
    const before = await folder.preload(keys);
    assertEquals(before, keys.map((_, i) => (i % 3 === 0 ? { n: i } : null)));
  } finally {
    state.close();
  }
});

Deno.test("given a document the folder already folded, when it is preloaded again, then the folded value stays and is returned", async () => {
  const state = await Deno.openKv(":memory:");
  try {
    const a = projectionKey("counter", ["a"]);
    await state.set(a, { n: 5 });
    const { kv, gets } = counting(state);
    const folder = new ProjectionFolder(kv, [counter], { existing: true });
    await folder.apply(event("a", 1));
    const readsBefore = gets();

    assertEquals(await folder.preload([a]), [{ n: 6 }]);
    await folder.apply(event("a", 2));
    await folder.flush();

    assertEquals(gets(), readsBefore, "nothing read again");
    assertEquals((await state.get(a)).value, { n: 7 });
  } finally {
    state.close();
  }
});

/** A document per stream, settled at its second touch; a later touch unsettles it again. */
const twoStep: Projection<{ n: number }> = {
  name: "two_step",
  keysOf: (e) => [[e.stream]],
  evolve: (doc, _e) => ({ n: (doc?.n ?? 0) + 1 }),
  settled: (doc) => doc.n === 2,
};
const { settled: _, ...unhinted } = twoStep;

/** Folds `events` into a fresh KV; `written()` counts the documents handed to the KV so far. */
async function fold(
  projection: Projection<{ n: number }>,
  events: StoredEvent[],
  beforeFlush?: (written: number) => void,
): Promise<Deno.KvEntry<unknown>[]> {
  const kv = await Deno.openKv(":memory:");
  const { kv: counted, sets: written } = countingSets(kv);
  try {
    const folder = new ProjectionFolder(counted, [projection], { cacheSize: 100_000 });
    for (const e of events) await folder.apply(e);
    beforeFlush?.(written());
    await folder.flush();
    return await Array.fromAsync(kv.list({ prefix: [] }));
  } finally {
    kv.close();
  }
}

Deno.test("given documents that settle, when the folder folds them, then it writes them out in batches before the flush, and the result is the same as without the hint", async () => {
  const streams = SETTLED_BATCH + 44;
  // Each stream touched twice (settled), and the first ten a third time after they were written.
  const events = [
    ...Array.from({ length: streams }, (_, i) => event(`s${i}`, 2 * i + 1)),
    ...Array.from({ length: streams }, (_, i) => event(`s${i}`, 2 * i + 2)),
    ...Array.from({ length: 10 }, (_, i) => event(`s${i}`, 2 * streams + i + 1)),
  ];
  let before = 0;
  const hinted = await fold(twoStep, events, (written) => (before = written));
  // Nothing is evicted with a cache this large: only the settled batch went out early.
  assertEquals(before, SETTLED_BATCH);
  const plain = await fold(unhinted as Projection<{ n: number }>, events);
  assertEquals(hinted.map((e) => [e.key, e.value]), plain.map((e) => [e.key, e.value]));
  assertEquals(hinted.length, streams);
  // The third touch found the written value: 3, not 1.
  assertEquals(hinted.find((e) => e.key.at(-1) === "s0")?.value, { n: 3 });
});

Deno.test("given a key preloaded twice, when the folder folds up to its cache's size, then it writes nothing early: the key counts once", async () => {
  const state = await Deno.openKv(":memory:");
  try {
    const { kv, sets } = countingSets(state);
    const a = projectionKey("counter", ["a"]);
    const folder = new ProjectionFolder(kv, [counter], { existing: true, cacheSize: 2 });
    await folder.preload([a, a]);
    await folder.apply(event("a", 1));
    await folder.apply(event("b", 2));
    assertEquals(sets(), 0, "two documents in a cache of two");
    await folder.flush();
    assertEquals(sets(), 2);
  } finally {
    state.close();
  }
});
