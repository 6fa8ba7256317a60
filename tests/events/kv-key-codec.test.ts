/**
 * Deno KV's key encoding as read from its file (projections/kv-key-codec.ts, kv-file.ts): keys
 * written by Deno KV itself decode back to the same parts, in the same order `list` gives, and
 * their key ids come out byte for byte as `keyId` writes them.
 */
import fc from "fast-check";
import { decodeKvKey, encodeKvKey, writeKeyId } from "../../events/kv-key-codec.ts";
import { KvFile } from "../../events/kv-file.ts";
import { ByteSink } from "../../src/kernel/json-bytes.ts";
import { keyId } from "../../projections/key-hash.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { withTempDir } from "../support/temp-dir.ts";

const part: fc.Arbitrary<Deno.KvKeyPart> = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.constantFrom("\u0000", "\u00ff", '"', "\\", "\n", "é", "漢", "😀", "a") }),
  fc.double(),
  fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1.5, -1e300),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
  fc.constantFrom(0n, 1n, -1n, 255n, 256n, -255n, -256n),
  fc.boolean(),
  fc.uint8Array({ maxLength: 6 }),
);

const samePart = (a: Deno.KvKeyPart, b: Deno.KvKeyPart) =>
  a instanceof Uint8Array && b instanceof Uint8Array
    ? a.length === b.length && a.every((x, i) => x === b[i])
    : Object.is(a, b);

Deno.test("KV keys: what Deno KV wrote decodes to the same parts, in list order, with the same ids", async () => {
  await withTempDir("tcb-kv-keys-", async (dir) => {
    const keys = fc.sample(fc.array(part, { minLength: 1, maxLength: 4 }), {
      numRuns: 400,
      seed: 7,
    });
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    for (const k of keys) await kv.set(["k", ...k], 1);
    const listed = (await Array.fromAsync(kv.list({ prefix: ["k"] }))).map((e) => e.key);
    kv.close();
    const file = KvFile.open(`${dir}/kv.sqlite3`);
    assert(file, "a KV file opens");
    const raw = [...file.pages(encodeKvKey(["k"]), 50)].flat();
    file.close();
    assertEquals(raw.length, listed.length);
    const sink = new ByteSink();
    const dec = new TextDecoder();
    raw.forEach((row, i) => {
      const key = decodeKvKey(row.key);
      assert(key, "decodes");
      assertEquals(key.length, listed[i].length);
      key.forEach((p, j) => assert(samePart(p, listed[i][j]), `part ${j} of ${keyId(listed[i])}`));
      sink.reset();
      // Written straight from the bytes unless a part is one `keyId` writes its own way.
      const plain = listed[i].every((p) =>
        typeof p !== "bigint" && !(p instanceof Uint8Array) &&
        !(typeof p === "number" && (!Number.isFinite(p) || Object.is(p, -0)))
      );
      assertEquals(writeKeyId(row.key, sink), plain);
      if (plain) assertEquals(dec.decode(sink.bytes()), keyId(listed[i]));
      else assertEquals(sink.length, 0, "a declined key writes nothing");
    });
  });
});

Deno.test("KV keys: a string prefix encodes as the keys under it start", async () => {
  await withTempDir("tcb-kv-keys-", async (dir) => {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    await kv.set(["p", "a\u0000b", "c"], 1);
    await kv.set(["p", "build", 7], 1);
    await kv.set(["q"], 1);
    kv.close();
    const file = KvFile.open(`${dir}/kv.sqlite3`)!;
    const prefix = encodeKvKey(["p", "a\u0000b"]);
    const rows = [...file.pages(prefix)].flat();
    assertEquals(rows.map((r) => decodeKvKey(r.key)), [["p", "a\u0000b", "c"]]);
    assertEquals([...rows[0].key.subarray(0, prefix.length)], [...prefix]);
    assertEquals([...file.pages(encodeKvKey(["p"]))].flat().length, 2);
    file.close();
  });
});

Deno.test("KV keys: bytes that are not a key do not decode", () => {
  assertEquals(decodeKvKey(new Uint8Array([0x99])), null);
  assertEquals(decodeKvKey(new Uint8Array([0x21, 1, 2])), null);
  assertEquals(decodeKvKey(new Uint8Array([0x15])), null);
});

Deno.test("KV file: anything but a KV file does not open", async () => {
  await withTempDir("tcb-kv-keys-", async (dir) => {
    await Deno.writeTextFile(`${dir}/not.sqlite3`, "hello");
    assertEquals(KvFile.open(`${dir}/not.sqlite3`), null);
    assertEquals(KvFile.open(`${dir}/missing.sqlite3`), null);
  });
});

Deno.test("KV file: versionstamps read without values are the ones Deno.Kv hands out", async () => {
  await withTempDir("tcb-kv-keys-", async (dir) => {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    for (let i = 0; i < 20; i++) await kv.set(["s", i], new Uint8Array(60_000 - i));
    const atomic = kv.atomic();
    for (let i = 20; i < 40; i++) atomic.set(["s", i], { i });
    await atomic.commit();
    await kv.set(["s", 3], new Uint8Array(10)); // a newer version of one
    const listed = await Array.fromAsync(kv.list({ prefix: ["s"] }));
    kv.close();
    const file = KvFile.open(`${dir}/kv.sqlite3`)!;
    const read = [...file.versionstamps(encodeKvKey(["s"]), 7)].flat();
    file.close();
    assertEquals(
      read.map(([k, vs]) => [decodeKvKey(k), vs]),
      listed.map((e) => [e.key, e.versionstamp]),
    );
  });
});

Deno.test("KV keys: -0, 0, NaN and the infinities are five keys to Deno KV, and five key ids", async () => {
  const odd = [0, -0, NaN, Infinity, -Infinity];
  const kv = await Deno.openKv(":memory:");
  try {
    for (const n of odd) await kv.set(["n", n], n);
    assertEquals((await Array.fromAsync(kv.list({ prefix: ["n"] }))).length, odd.length);
  } finally {
    kv.close();
  }
  const ids = odd.map((n) => keyId(["p", "audit_build", n]));
  assertEquals(new Set(ids).size, odd.length, ids.join(" "));
  assertEquals(keyId(["p", 7, "x"]), '["p",7,"x"]', "other keys keep their ids");
});
