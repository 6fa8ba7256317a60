/**
 * ProjectionFolder's preload (projections/folder.ts), as the incremental audit uses it: every
 * document the new events touch is read once, up front, absent ones included, so folding the
 * events reads nothing more.
 */
import { ProjectionFolder } from "../../projections/folder.ts";
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
  const proxy = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get") {
        return (key: Deno.KvKey) => {
          gets++;
          return target.get(key);
        };
      }
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
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
