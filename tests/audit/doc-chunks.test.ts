/** The incremental audit's document store: packed chunks, found by an in-memory index. */
import { assertEquals } from "../support/assert.ts";
import { DocChunks, DocChunkWriter } from "../../src/audit/doc-chunks.ts";

Deno.test("documents read back from chunks; inserts, deletes and growth past the value limit", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const w = new DocChunkWriter(kv);
    const doc = (i: number) => ({ n: i, pad: "x".repeat(300) });
    // In KV key order, as the live projections are listed.
    for (let i = 100; i < 300; i++) await w.add(["p", "b", i], JSON.stringify(doc(i)));
    await w.finish();

    const c = new DocChunks(kv);
    assertEquals(await c.get(["p", "b", 150]), doc(150));
    assertEquals(await c.get(["p", "b", 1000]), undefined);
    // Below every chunk, far past the last one (hundreds of KiB into one chunk), and deletes.
    for (let i = 0; i < 10; i++) await c.set(["p", "a", i], doc(i));
    for (let i = 1000; i < 1600; i++) await c.set(["p", "b", i], doc(i));
    await c.set(["p", "b", 150], null);
    await c.set(["p", "b", 151], { changed: true });
    await c.flush();

    const again = new DocChunks(kv);
    await again.load([["p", "a", 3], ["p", "b", 1599], ["p", "b", 151]]);
    assertEquals(await again.get(["p", "a", 3]), doc(3));
    assertEquals(await again.get(["p", "b", 1599]), doc(1599));
    assertEquals(await again.get(["p", "b", 150]), undefined);
    assertEquals(await again.get(["p", "b", 151]), { changed: true });
    assertEquals(await again.get(["p", "b", 299]), doc(299));
    for await (const e of kv.list<Uint8Array>({ prefix: ["c"] })) {
      if (e.value.byteLength > 64 * 1024) throw new Error("a chunk over the value limit");
    }
  } finally {
    kv.close();
  }
});
