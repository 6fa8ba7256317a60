/** The additive digest the fast replay compares: order-blind, salted, sensitive. */
import fc from "fast-check";
import { ProjectionDigest } from "../../projections/doc-digest.ts";
import { assert } from "../support/assert.ts";

const docs = fc.uniqueArray(
  fc.tuple(
    fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { minLength: 1, maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
  ),
  { selector: ([key]) => JSON.stringify(key), minLength: 1, maxLength: 30 },
);

const digestOf = (salt: string, entries: [Deno.KvKey, unknown][]) => {
  const d = new ProjectionDigest(salt);
  for (const [key, doc] of entries) d.add(key, doc);
  return d;
};

Deno.test("the digest does not depend on the order documents are added in", () => {
  fc.assert(
    fc.property(docs, fc.infiniteStream(fc.nat()), (entries, order) => {
      const shuffled = [...entries].sort(() => (order.next().value % 3) - 1);
      assert(digestOf("s", entries).equals(digestOf("s", shuffled)));
    }),
  );
});

Deno.test("a changed value, a moved key, a missing document or another salt all differ", () => {
  fc.assert(
    fc.property(docs, fc.nat(), (entries, pick) => {
      const i = pick % entries.length;
      const [key, doc] = entries[i];
      const base = digestOf("s", entries);
      const changed = entries.map((e, j) => (j === i ? [key, { ...(doc as object), z: 1 }] : e));
      const moved = entries.map((e, j) => (j === i ? [[...key, "moved"], doc] : e));
      const fewer = entries.filter((_, j) => j !== i);
      for (const other of [changed, moved, fewer]) {
        assert(!base.equals(digestOf("s", other as [Deno.KvKey, unknown][])));
      }
      assert(!base.equals(digestOf("t", entries)));
    }),
  );
});

Deno.test("a null document counts as no document", () => {
  const d = digestOf("s", [[["p", "a"], { n: 1 }]]);
  d.add(["p", "b"], null);
  assert(d.equals(digestOf("s", [[["p", "a"], { n: 1 }]])));
  assert(d.count === 1);
});

/**
 * The sum is of BLAKE3 over the salt's key and each line, whichever BLAKE3 computes it: checked
 * against hash-wasm's (another implementation, the one the digest used before) on documents of
 * every size a KV value can hold, across blake3-jit's one-chunk, many-chunk and SIMD paths.
 */
Deno.test("each document adds BLAKE3 of the salt's key and its line, as another BLAKE3 gives it", async () => {
  const { createBLAKE3 } = await import("hash-wasm");
  const { createHash } = await import("node:crypto");
  const { keyId } = await import("../../projections/key-hash.ts");
  const reference = await createBLAKE3(256);
  const sized = fc.tuple(
    fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { minLength: 1, maxLength: 3 }),
    fc.oneof(fc.nat(1100), fc.nat(70_000)),
    fc.string({ unit: "binary", maxLength: 4 }),
  );
  fc.assert(
    fc.property(fc.array(sized, { minLength: 1, maxLength: 6 }), fc.string(), (docs, salt) => {
      const key = createHash("sha256").update(`projection digest key\n${salt}`).digest();
      const sum = new Uint32Array(8);
      const d = new ProjectionDigest(salt);
      for (const [k, size, tail] of docs) {
        const doc = { pad: "x".repeat(size), tail };
        d.add(k, doc);
        const line = new TextEncoder().encode(`${keyId(k)}\t${JSON.stringify(doc)}`);
        reference.init();
        reference.update(key.subarray(0, 32));
        reference.update(line);
        const h = reference.digest("binary");
        const lanes = new Uint32Array(h.buffer, h.byteOffset, 8);
        for (let i = 0; i < 8; i++) sum[i] += lanes[i];
      }
      assert(d.equals(ProjectionDigest.of(salt, [...sum], docs.length)));
    }),
    { numRuns: 60 },
  );
});
