/**
 * Replay verifies the chain with a synchronous SHA-256 (projections/replay.ts eventHashSync,
 * for speed); the store writes it with WebCrypto (events/hash.ts eventHash). If the two ever
 * differed, every replay would report a broken chain, so they are pinned equal on arbitrary
 * events, including non-ASCII text, nested objects and key orders.
 */
import fc from "fast-check";
import { eventHash } from "../../events/hash.ts";
import type { StoredEvent } from "../../events/types.ts";
import { eventHashSync } from "../../events/hash.ts";
import { assertEquals } from "../support/assert.ts";

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ unit: "grapheme" }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: "grapheme", maxLength: 8 }), tie("value"), { maxKeys: 5 }),
  ),
})).value;

Deno.test("eventHashSync equals eventHash on arbitrary events", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        type: fc.string({ minLength: 1, maxLength: 20 }),
        v: fc.integer({ min: 1, max: 3 }),
        data: fc.dictionary(fc.string({ unit: "grapheme", maxLength: 12 }), json, { maxKeys: 8 }),
        at: fc.integer({ min: 0 }),
        stream: fc.string({ unit: "grapheme" }),
        streamPosition: fc.nat(),
        position: fc.nat(),
        prevHash: fc.stringMatching(/^[0-9a-f]{64}$/),
      }),
      async (e) => {
        const event = e as unknown as Omit<StoredEvent, "hash">;
        assertEquals(eventHashSync(event), await eventHash(event));
      },
    ),
    { numRuns: 300 },
  );
});
