/**
 * readList: a projection's documents under a prefix, typed by the projection, with `before` (a
 * page's cursor: only keys sorting before it) and the KV list options (reverse, limit).
 */
import { assertEquals } from "../support/assert.ts";
import type { Projection } from "../../events/projection.ts";
import { keyOf, readList } from "../../src/commands/read.ts";

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
