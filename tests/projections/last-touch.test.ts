/**
 * The fold's last touches (digest-fold.ts `LastTouch`): a document's first touch only marks it
 * seen, so the maps hold just the documents touched again, and the fold still hands every
 * document to the digest whole, at or after its last touch.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../support/assert.ts";
import { DigestFolder, LastTouch } from "../../projections/digest-fold.ts";
import { ProjectionDigest } from "../../projections/doc-digest.ts";
import {
  fingerprint,
  FingerprintFilter,
  keyId,
  nameSeed,
  partsFingerprint,
} from "../../projections/key-hash.ts";
import { projectionKey } from "../../events/keys.ts";
import type { Projection } from "../../events/projection.ts";
import type { StoredEvent } from "../../events/types.ts";

/** A fold that lists the positions that touched each document. */
const counter: Projection<{ touches: number[] }> = {
  name: "counter",
  keysOf: (e) => (e as unknown as { data: { subs: Deno.KvKey[] } }).data.subs,
  evolve: (doc, e) => ({ touches: [...(doc?.touches ?? []), e.position] }),
};

/** Events touching documents by their one-string keys. */
const events = (touches: string[][]): StoredEvent[] =>
  eventsOf(touches.map((keys) => keys.map((k) => [k])));

const eventsOf = (touches: Deno.KvKey[][]): StoredEvent[] =>
  touches.map((subs, i) =>
    ({
      type: "Touched",
      data: { subs },
      at: 0,
      stream: "s",
      streamPosition: i + 1,
      position: i + 1,
      prevHash: "",
      hash: "",
    }) as unknown as StoredEvent
  );

/** The digest of the fold done in memory, every document kept to the end. */
function wholeDigest(log: StoredEvent[], salt: string): ProjectionDigest {
  const docs = new Map<string, { sub: Deno.KvKey; doc: unknown }>();
  for (const e of log) {
    for (const sub of counter.keysOf(e)) {
      // keyId writes -0 as 0: told apart here, as KV tells those keys apart.
      const id = keyId(sub) + (sub.some((k) => Object.is(k, -0)) ? " -0" : "");
      docs.set(id, { sub, doc: counter.evolve((docs.get(id)?.doc ?? null) as never, e, sub) });
    }
  }
  const digest = new ProjectionDigest(salt);
  for (const { sub, doc } of docs.values()) digest.add(projectionKey(counter.name, sub), doc);
  return digest;
}

const touchLists = fc.array(
  fc.array(fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `k${i}`)), { maxLength: 3 }),
  { maxLength: 200 },
);

Deno.test("given any touches, when folded by last touch, then the digest is the whole fold's", () => {
  fc.assert(
    fc.property(touchLists, fc.integer({ min: 0, max: 400 }), (touches, sizedFor) => {
      const log = events(touches);
      // The size only changes how many first touches pass for seen (the test below forces many).
      const lastTouch = new LastTouch([counter], [], sizedFor);
      for (const e of log) lastTouch.record(e);
      const folder = new DigestFolder([counter], lastTouch, "salt", { maxOpen: 1_000 });
      for (const e of log) assert(folder.apply(e));
      const digest = folder.finish();
      const whole = wholeDigest(log, "salt");
      assertEquals(digest.count, whole.count);
      assert(digest.equals(whole));
    }),
  );
});

Deno.test("given documents touched once, when their last touches are recorded, then the maps skip them and the fold closes them at once", () => {
  // 1,000 documents touched once, 10 touched twice (the second time at the end).
  const touches = [
    ...Array.from({ length: 1_000 }, (_, i) => [`once${i}`]),
    ...Array.from({ length: 10 }, (_, i) => [`twice${i}`]),
    ...Array.from({ length: 10 }, (_, i) => [`twice${i}`]),
  ];
  const log = events(touches);
  const lastTouch = new LastTouch([counter], [], log.length);
  for (const e of log) lastTouch.record(e);
  // The ten touched twice, and a few first touches the filter mistook for later ones.
  assert(lastTouch.kept >= 10 && lastTouch.kept < 100, `${lastTouch.kept} kept`);
  const of = (k: string, now: number) =>
    lastTouch.ofFingerprint("counter", partsFingerprint(nameSeed("counter"), [k]), now);
  assertEquals(of("once5", 6), 6);
  assertEquals(of("twice3", 1_004), 1_014);
  // Only the ten touched twice are open at once: one more and the fold would give up.
  const folder = new DigestFolder([counter], lastTouch, "salt", { maxOpen: 10 });
  for (const e of log) assert(folder.apply(e), `open past 10 at ${e.position}`);
  assert(folder.finish().equals(wholeDigest(log, "salt")));
});

Deno.test("FingerprintFilter never answers new for a fingerprint it was given", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 500 }),
      fc.integer({ min: 0, max: 1_000 }),
      (fingerprints, sizedFor) => {
        const filter = new FingerprintFilter(sizedFor);
        const given = new Set<number>();
        for (const f of fingerprints) {
          const there = filter.add(f);
          if (given.has(f)) assert(there, `${f} forgotten`);
          given.add(f);
        }
      },
    ),
  );
  // At the size it was made for, few new fingerprints pass for seen (two probes, 8 bits each).
  const filter = new FingerprintFilter(100_000);
  let mistaken = 0;
  for (let i = 0; i < 100_000; i++) if (filter.add(Math.imul(i, 0x9e3779b1) >>> 0)) mistaken++;
  assert(mistaken < 8_000, `${mistaken} of 100,000 mistaken for seen`);
});

Deno.test("given documents whose keys share a fingerprint, or differ only as -0 and 0 or by bytes, when folded together, then each stays its own", () => {
  // Two string keys whose parts' fingerprints share the open documents' 30-bit slot.
  const seen = new Map<number, string>();
  let pair: [string, string] | null = null;
  for (let i = 0; !pair; i++) {
    const k = `k${i}`;
    const slot = partsFingerprint(nameSeed("counter"), [k]) & 0x3fffffff;
    const other = seen.get(slot);
    if (other !== undefined) pair = [other, k];
    seen.set(slot, k);
  }
  const [a, b] = pair;
  const subs: Deno.KvKey[] = [[a], [b], [0], [-0], [new Uint8Array([1, 2])], [
    new Uint8Array([1, 3]),
  ]];
  // Each touched three times, interleaved, so all are open at once.
  const log = eventsOf([...subs.map((s) => [s]), ...subs.map((s) => [s]), ...subs.map((s) => [s])]);
  const lastTouch = new LastTouch([counter], [], log.length);
  for (const e of log) lastTouch.record(e);
  const folder = new DigestFolder([counter], lastTouch, "salt", { maxOpen: subs.length });
  for (const e of log) assert(folder.apply(e), `open past ${subs.length} at ${e.position}`);
  const digest = folder.finish();
  assertEquals(digest.count, subs.length);
  assert(digest.equals(wholeDigest(log, "salt")));
});

Deno.test("given more first touches than the filter was sized for, when some pass for seen, then the fold is still whole", () => {
  // 20,000 documents touched once and 50 touched twice, through a filter sized for none (its
  // smallest: 65,536 bits), so that many first touches are mistaken for later ones.
  const touches: string[][] = [];
  for (let i = 0; i < 20_000; i++) {
    touches.push([`once${i}`]);
    if (i % 400 === 0) touches.push([`twice${i}`]);
  }
  for (let i = 0; i < 20_000; i += 400) touches.push([`twice${i}`]);
  const log = events(touches);
  const lastTouch = new LastTouch([counter], [], 0);
  for (const e of log) lastTouch.record(e);
  assert(
    lastTouch.kept > 500,
    `${lastTouch.kept} kept: first touches were mistaken for later ones`,
  );
  const folder = new DigestFolder([counter], lastTouch, "salt", { maxOpen: 1_000 });
  for (const e of log) assert(folder.apply(e));
  const digest = folder.finish();
  assertEquals(digest.count, 20_050);
  assert(digest.equals(wholeDigest(log, "salt")));
});

Deno.test("given two keys with the same fingerprint, one touched once and one twice, in either order, then both are folded whole", () => {
  const byFingerprint = new Map<number, string>();
  let pair: [string, string] | null = null;
  for (let i = 0; !pair; i++) {
    const k = `c${i}`;
    const f = partsFingerprint(nameSeed("counter"), [k]);
    const other = byFingerprint.get(f);
    if (other !== undefined) pair = [other, k];
    byFingerprint.set(f, k);
  }
  const [a, b] = pair;
  for (const touches of [[[b], ["x"], [b], [a]], [[a], [b], ["x"], [b]], [[b], [a], [b]]]) {
    const log = events(touches);
    const lastTouch = new LastTouch([counter], [], log.length);
    for (const e of log) lastTouch.record(e);
    const folder = new DigestFolder([counter], lastTouch, "salt");
    for (const e of log) assert(folder.apply(e));
    const digest = folder.finish();
    assertEquals(digest.count, 3 - (touches.flat().includes("x") ? 0 : 1));
    assert(digest.equals(wholeDigest(log, "salt")), JSON.stringify(touches));
  }
});

Deno.test("given a projection's name seed, when a key's parts are fingerprinted from it, then the name counts as it did when hashed with the parts", () => {
  fc.assert(fc.property(fc.string(), fc.string(), (name, other) => {
    // No parts: the fingerprint is the name's own, as `fingerprint` hashes a string.
    assertEquals(partsFingerprint(nameSeed(name), []), fingerprint(name));
    if (name !== other) {
      // Each step after the name is one-to-one (xor, then a multiply by an odd number): keys
      // of two names differ whenever the names' own fingerprints do.
      const a = partsFingerprint(nameSeed(name), ["k", 1]);
      const b = partsFingerprint(nameSeed(other), ["k", 1]);
      assert(a !== b || fingerprint(name) === fingerprint(other));
    }
  }));
});
