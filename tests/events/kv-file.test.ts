/**
 * Reading a KV file's rows directly (events/kv-file.ts): a page comes back from SQLite as one row
 * of joined blobs, and must give exactly the entries a row-by-row read gives.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { DatabaseSync } from "node:sqlite";
import { KvFile, type PackedRow, unpack } from "../../events/kv-file.ts";
import { encodeKvKey } from "../../events/kv-key-codec.ts";
import { withTempDir } from "../support/temp-dir.ts";

Deno.test("KvFile.pages: pages read as one row each give every entry a row-by-row read gives", async () => {
  await withTempDir("tcb-kv-file-", async (dir) => {
    const path = `${dir}/kv.sqlite3`;
    const kv = await Deno.openKv(path);
    // Keys with NUL and 0xFF bytes inside, values of every encoding, an empty string and bytes.
    for (let i = 0; i < 230; i++) {
      const value = i % 5 === 0
        ? new Uint8Array(i % 3) // bytes, some of them empty
        : i % 5 === 1
        ? new Deno.KvU64(BigInt(i) << 40n)
        : i % 5 === 2
        ? ""
        : { n: i, s: "é\u0000\uffff".repeat(i % 7) };
      await kv.set(
        ["d", i % 2 ? `a\u0000${i}` : `b\u00ff${i}`, new Uint8Array([0, 255, i])],
        value,
      );
    }
    await kv.set(["e"], "past the prefix");
    kv.close();
    const db = new DatabaseSync(path, { readOnly: true });
    const expected = db.prepare("select k, v, v_encoding from kv order by k").all()
      .map((r) => r as { k: Uint8Array; v: Uint8Array; v_encoding: number })
      .filter((r) => r.k[1] === "d".charCodeAt(0));
    db.close();
    assertEquals(expected.length, 230);
    const file = KvFile.open(path)!;
    assert(file.packed, "a UTF-8 file is read a page to a row");
    try {
      const pages = [...file.pages(encodeKvKey(["d"]), 50)];
      assertEquals(pages.map((p) => p.length), [50, 50, 50, 50, 30]);
      const rows = pages.flat();
      assertEquals(rows.length, expected.length);
      rows.forEach((r, i) => {
        assertEquals([...r.key], [...expected[i].k], `key ${i}`);
        assertEquals([...r.value], [...expected[i].v], `value ${i}`);
        assertEquals(r.encoding, expected[i].v_encoding, `encoding ${i}`);
      });
      assertEquals([...file.pages(encodeKvKey(["none"]))].length, 0);
    } finally {
      file.close();
    }
  });
});

Deno.test("KvFile.pages: a joined page whose keys are out of order or whose lengths do not add up is not taken", () => {
  const keys = new Uint8Array([1, 2, 3, 1, 2]);
  const values = new Uint8Array([9, 8, 7]);
  const ok: PackedRow = [2, new Uint8Array([1, 2, 3, 1, 2, 4]), values, "3,3", "1,2", "1,3"];
  assertEquals(unpack(ok).map((e) => [[...e.key], [...e.value], e.encoding]), [
    [[1, 2, 3], [9], 1],
    [[1, 2, 4], [8, 7], 3],
  ]);
  // Fewer entries than the count: the caller reads that page row by row instead.
  const taken = (row: PackedRow) => unpack(row).length === row[0];
  assert(taken(ok));
  assert(!taken([2, keys, values, "3,2", "1,2", "1,1"]), "keys out of order");
  assert(!taken([2, keys, values, "3,3", "1,2", "1,1"]), "past the keys' end");
  assert(
    !taken([2, new Uint8Array([1, 2, 3, 1, 2, 4]), values, "3,3", "1,1", "1,1"]),
    "values left over",
  );
  assert(!taken([2, keys, values, "3", "1,2", "1,1"]), "a length missing");
  assert(!taken([2, keys, values, "3,x", "1,2", "1,1"]), "not a number");
  assert(!taken([2, new Uint8Array([1, 2, 3, 1, 2, 4]), values, "3,3", "1,2", "1,3", 1]), "text");
  assert(!taken([2, null, values, "3,3", "1,2", "1,3"]), "no keys");
});

Deno.test("KvFile.pages: a value stored as text, not a blob (a file Deno KV did not write), is read as the row gives it", async () => {
  await withTempDir("tcb-kv-file-", async (dir) => {
    const path = `${dir}/kv.sqlite3`;
    const kv = await Deno.openKv(path);
    for (let i = 0; i < 5; i++) await kv.set(["d", i], new Uint8Array([i]));
    kv.close();
    const db = new DatabaseSync(path);
    db.prepare("update kv set v = 'abc' where k = ?").run(encodeKvKey(["d", 2]));
    db.close();
    const file = KvFile.open(path)!;
    try {
      const rows = [...file.pages(encodeKvKey(["d"]))].flat();
      assertEquals(rows.length, 5);
      assertEquals(rows[2].value as unknown, "abc", "the row's own value, not its text as bytes");
      assertEquals([...rows[3].value], [3]);
    } finally {
      file.close();
    }
  });
});
