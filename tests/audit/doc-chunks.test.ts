/**
 * The incremental audit's document store: packed chunks, found by an in-memory index, or by one
 * query per document in the state KV's file.
 */
import { kvWith } from "../support/kv.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { ChunkFile, DocChunks, DocChunkWriter } from "../../src/audit/doc-chunks.ts";
import { KvFile } from "../../events/kv-file.ts";

/** `kv`, counting the listings of the chunk index (`["i", ...]`). */
function countingIndexLists(kv: Deno.Kv) {
  const lists = { index: 0 };
  const wrapped = kvWith(kv, {
    list: ((selector: Deno.KvListSelector, o?: Deno.KvListOptions) => {
      if ("prefix" in selector && selector.prefix[0] === "i") lists.index++;
      return kv.list(selector, o);
    }) as Deno.Kv["list"],
  });
  return { kv: wrapped, lists };
}

async function readsBack(opts: { file: boolean; stateFile?: boolean }) {
  const dir = await Deno.makeTempDir({ prefix: "tcb-doc-chunks-" });
  const statePath = `${dir}/state.sqlite3`;
  const { kv, lists } = countingIndexLists(
    await Deno.openKv(opts.stateFile ? statePath : ":memory:"),
  );
  const stateFile = () => opts.stateFile ? KvFile.open(statePath) : null;
  const open = (fresh: boolean) =>
    opts.file ? ChunkFile.open(`${dir}/docs.bin`, { fresh }) : Promise.resolve(null);
  const first = await open(true);
  try {
    const w = new DocChunkWriter(kv, first);
    const doc = (i: number) => ({ n: i, pad: "x".repeat(300) });
    // In KV key order, as the live projections are listed.
    for (let i = 100; i < 300; i++) await w.add(["p", "b", i], JSON.stringify(doc(i)));
    // A key part the file's encoder does not take: found through the index even with the file.
    await w.add(["p", "z", 1n], JSON.stringify(doc(1)));
    await w.finish();
    first?.close();

    const file = await open(false);
    const view = stateFile();
    const c = new DocChunks(kv, file, view);
    assertEquals(await c.get(["p", "b", 150]), doc(150));
    assertEquals(await c.get(["p", "b", 1000]), undefined);
    // Below every chunk, far past the last one (hundreds of KiB into one chunk), and deletes.
    for (let i = 0; i < 10; i++) await c.set(["p", "a", i], doc(i));
    for (let i = 1000; i < 1600; i++) await c.set(["p", "b", i], doc(i));
    await c.set(["p", "b", 150], null);
    await c.set(["p", "b", 151], { changed: true });
    await c.flush();
    file?.close();
    view?.close();

    const later = await open(false);
    const laterView = stateFile();
    const again = new DocChunks(kv, later, laterView);
    await again.load([["p", "a", 3], ["p", "b", 1599], ["p", "b", 151]]);
    assertEquals(await again.get(["p", "a", 3]), doc(3));
    assertEquals(await again.get(["p", "b", 1599]), doc(1599));
    assertEquals(await again.get(["p", "b", 150]), undefined);
    assertEquals(await again.get(["p", "b", 151]), { changed: true });
    assertEquals(await again.get(["p", "b", 299]), doc(299));
    later?.close();
    laterView?.close();
    // Found in the state's file, the chunks cost no listing of the whole index...
    if (opts.stateFile) assertEquals(lists.index, 0);
    else assert(lists.index > 0);
    // ...but for a key it cannot encode.
    const third = new DocChunks(kv, await open(false), stateFile());
    assertEquals(await third.get(["p", "z", 1n]), doc(1));
    assert(lists.index > 0, "the index was not read for a key the file cannot take");
    third.file?.close();
    third.stateFile?.close();
    let inKv = 0;
    for await (const e of kv.list<Uint8Array>({ prefix: ["c"] })) {
      inKv++;
      if (e.value.byteLength > 64 * 1024) throw new Error("a chunk over the value limit");
    }
    // With a file, the KV holds only where each chunk is.
    if (opts.file) assertEquals(inKv, 0);
    else assert(inKv > 0);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("documents read back from chunks; inserts, deletes and growth past the value limit", () =>
  readsBack({ file: false }));

Deno.test("the same with the chunks' bytes in a file beside the state KV", () =>
  readsBack({ file: true }));

Deno.test("the same with each document's chunk found in the state KV's file, the index never listed", () =>
  readsBack({ file: true, stateFile: true }));
