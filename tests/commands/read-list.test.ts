/**
 * readList: a projection's documents under a prefix, typed by the projection, with `before` (a
 * page's cursor: only keys sorting before it) and the KV list options (reverse, limit); and
 * listEntries, the same with each document's key.
 */
import { assert, assertEquals } from "../support/assert.ts";
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

Deno.test("listEntries: given ids under a key, then each with its key below the prefix, before a cursor too; -0 and 0 apart", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (const id of [1, 2, 3, -0, 0]) await kv.set(keyOf(index, ["k1", id]), id);
    await kv.set(keyOf(index, ["k2", 9]), 9);
    const entries = (opts: Parameters<typeof listEntries>[3] = {}) =>
      Array.fromAsync(listEntries(kv, index, ["k1"], opts), (e) => [e.sub, e.doc]);
    const all = await entries();
    assertEquals(all, [[[-0], -0], [[0], 0], [[1], 1], [[2], 2], [[3], 3]]);
    assert(Object.is(all[0][1], -0) && Object.is(all[1][1], 0), "-0 first, 0 after it");
    assertEquals(await entries({ before: 2 }), [[[-0], -0], [[0], 0], [[1], 1]]);
  } finally {
    kv.close();
  }
});
