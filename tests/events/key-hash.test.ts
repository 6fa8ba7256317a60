/**
 * The replay's typed-array bookkeeping against plain Maps and Sets: the fingerprint map must
 * never report a last touch earlier than the true one (a shared fingerprint may only make it
 * later), across growth; the Bloom filter must never forget an id.
 */
import fc from "fast-check";
import { KeyBloomFilter, KeyFingerprintMap } from "../../projections/key-hash.ts";
import { assert, assertEquals } from "../support/assert.ts";

const writes = fc.array(
  fc.tuple(
    fc.string({ unit: "grapheme", maxLength: 30 }),
    fc.integer({ min: 1, max: 2 ** 32 - 1 }),
  ),
  { maxLength: 400 },
);

Deno.test("KeyFingerprintMap keeps the largest value per id, through growth", () => {
  fc.assert(
    fc.property(writes, (ws) => {
      const map = new KeyFingerprintMap(16);
      const reference = new Map<string, number>();
      for (const [id, v] of ws) {
        map.setMax(id, v);
        reference.set(id, Math.max(reference.get(id) ?? 0, v));
      }
      for (const [id, v] of reference) {
        // Equal unless two ids share a fingerprint, and then never smaller.
        assert(map.get(id)! >= v, `${id}: ${map.get(id)} < ${v}`);
      }
      assert(map.size <= reference.size);
    }),
  );
});

Deno.test("KeyFingerprintMap at a million ids: exact but for shared fingerprints", () => {
  const map = new KeyFingerprintMap();
  const ids = Array.from({ length: 1_000_000 }, (_, i) => JSON.stringify(["p", "build", i]));
  ids.forEach((id, i) => map.setMax(id, i + 1));
  let merged = 0;
  ids.forEach((id, i) => {
    const v = map.get(id)!;
    assert(v >= i + 1);
    if (v !== i + 1) merged++;
  });
  // About n²/2^33 pairs share a 32-bit fingerprint: ~116 here.
  assert(merged < 1_000, `${merged} ids share an entry`);
  assertEquals(map.get(JSON.stringify(["p", "build", -1])), undefined);
});

Deno.test("KeyBloomFilter never forgets an id it was given", () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: "grapheme", maxLength: 30 }), { maxLength: 300 }),
      (ids) => {
        const filter = new KeyBloomFilter();
        for (const id of ids) filter.add(id);
        for (const id of ids) assert(filter.has(id));
      },
    ),
  );
});
