/**
 * readList: a projection's documents under a prefix, typed by the projection, with `before` (a
 * page's cursor: only keys sorting before it) and the KV list options (reverse, limit); and
 * listEntries, the same with each document's key and `after`.
 */
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import type { Projection } from "../../events/projection.ts";
import { keyOf, listEntries, readList } from "../../src/commands/read.ts";

const index: Projection<number> = { name: "test_index", keysOf: () => [], evolve: (d) => d };

Deno.test("readList: given ids 1..5 under a key, then newest first, a page before a cursor, nothing of another key", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (let id = 1; id <= 5; id++) await kv.set(keyOf(index, ["k1", id]), id);
    await kv.set(keyOf(index, ["k2", 9]), 9);
    assertEquals(await readList(kv, index, ["k1"]), [1, 2, 3, 4, 5]);
    assertEquals(await readList(kv, index, ["k1"], { reverse: true, limit: 2 }), [5, 4]);
    assertEquals(await readList(kv, index, ["k1"], { before: 4, reverse: true, limit: 2 }), [3, 2]);
    assertEquals(await readList(kv, index, ["k1"], { before: 1, reverse: true }), []);
    assertEquals(await readList(kv, index, ["k2"]), [9]);
  } finally {
    kv.close();
  }
});

Deno.test("listEntries: given ids 1..5 under a key, then each with its key, those after a cursor (and before another), -0 before 0; bytes or reverse with `after` refused", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (const id of [1, 2, 3, 4, 5, -0, 0]) await kv.set(keyOf(index, ["k1", id]), id);
    const entries = (opts: Parameters<typeof listEntries>[3]) =>
      Array.fromAsync(listEntries(kv, index, ["k1"], opts), (e) => [e.sub[0], e.doc]);
    assertEquals(await entries({ after: 3 }), [[4, 4], [5, 5]]);
    assertEquals(await entries({ after: 1, before: 4 }), [[2, 2], [3, 3]]);
    const afterMinusZero = await entries({ after: -0, before: 2 });
    assertEquals(afterMinusZero.length, 2);
    assert(Object.is(afterMinusZero[0][0], 0) && Object.is(afterMinusZero[1][0], 1));
    for (const opts of [{ after: new Uint8Array([1]) }, { after: 1, reverse: true }]) {
      await assertRejects(() => entries(opts));
    }
  } finally {
    kv.close();
  }
});
