/**
 * A fold keyed by one key part, its documents stored many to a KV value: the documents numbered
 * `n * size` up to `n * size + size - 1` in one pack under the key `[n]`. A fold
 * that writes each of hundreds of thousands of documents (the audit's builds) spends most of its
 * KV time on the entries themselves (a serialization, an op and a SQLite row each); a pack of 64
 * builds is one of each, and still small (about 40 KiB of the KV's 64 KiB a value).
 *
 * Packs list in the order of the documents they hold: `[n]` sorts by `n`, and a pack holds its
 * documents sorted by key. A key that is not one number (a tampered log's odd build id) keeps a
 * pack of its own under that same key, so nothing is lost and nothing collides with a pack number.
 */
import type { Projection } from "../events/projection.ts";

/** The documents of one pack, in key order: `docs[i]` is the document at key `[ids[i]]`. */
export interface Pack<D> {
  ids: Deno.KvKeyPart[];
  docs: D[];
}

/** The pack key of a document's key (one part: packs of longer keys would not list in order). */
export function packKey(sub: Deno.KvKey, size: number): Deno.KvKey {
  if (sub.length !== 1) throw new Error(`a packed fold's keys have one part, not ${sub.length}`);
  return typeof sub[0] === "number" ? [Math.floor(sub[0] / size)] : sub;
}

const sameKey = (a: Deno.KvKey, b: Deno.KvKey) =>
  a.length === b.length && a.every((part, i) => Object.is(part, b[i]));

/**
 * Where `id` is in `ids`, or where it would go (`hit` false). Packs hold tens: a scan from the
 * end.
 */
function find(ids: Deno.KvKeyPart[], id: Deno.KvKeyPart): { at: number; hit: boolean } {
  let i = ids.length - 1;
  while (i >= 0 && (ids[i] as number) > (id as number)) i--;
  return i >= 0 && Object.is(ids[i], id) ? { at: i, hit: true } : { at: i + 1, hit: false };
}

/** The document at `id` in `pack`, or null. */
export function docIn<D>(pack: Pack<D> | null, id: Deno.KvKeyPart): D | null {
  if (!pack) return null;
  const { at, hit } = find(pack.ids, id);
  return hit ? pack.docs[at] : null;
}

/**
 * `inner`, folded into packs of `size`. A pack that came from elsewhere (read from the KV, or
 * handed in) is copied before it changes, so whoever holds it still sees it as it was; the
 * documents no event touched stay the same objects, which is what `changedIn` goes by. A pack
 * this projection made is changed in place: copying 64 builds' arrays on each of a million
 * touches was a tenth of the audit's chain pass, most of it garbage. A pack is settled when it is
 * full and every document in it is.
 */
export function packed<D>(inner: Projection<D>, size: number): Projection<Pack<D>> {
  /**
   * The packs this projection's folds made (every fold of it in the process; the only packs it
   * changes in place). A reader that needs a pack as it was takes it before a fold makes its own
   * copy (the incremental audit's packs before its events are read from the state first).
   */
  const made = new WeakSet<Pack<D>>();
  return {
    name: inner.name,
    handles: inner.handles,
    keysOf(e) {
      const subs = inner.keysOf(e);
      if (subs.length === 1) return [packKey(subs[0], size)];
      const keys: Deno.KvKey[] = [];
      for (const sub of subs) {
        const key = packKey(sub, size);
        if (!keys.some((k) => sameKey(k, key))) keys.push(key);
      }
      return keys;
    },
    evolve(pack, e, key) {
      const mine = pack !== null && made.has(pack);
      const ids = !pack ? [] : mine ? pack.ids : pack.ids.slice();
      const docs = !pack ? [] : mine ? pack.docs : pack.docs.slice();
      for (const sub of inner.keysOf(e)) {
        if (!sameKey(packKey(sub, size), key)) continue;
        const id = sub[0];
        const { at, hit } = find(ids, id);
        const doc = inner.evolve(hit ? docs[at] : null, e, sub);
        if (hit && doc === null) {
          ids.splice(at, 1);
          docs.splice(at, 1);
        } else if (hit) docs[at] = doc!;
        else if (doc !== null) {
          ids.splice(at, 0, id);
          docs.splice(at, 0, doc);
        }
      }
      if (ids.length === 0) return null;
      if (mine) return pack;
      const next = { ids, docs };
      made.add(next);
      return next;
    },
    settled: inner.settled
      ? (pack) => pack.ids.length >= size && pack.docs.every((d) => inner.settled!(d))
      : undefined,
    count: (pack) => pack.ids.length,
  };
}

/**
 * The documents that differ between a pack before some events and after them (the after pack was
 * folded from the before one, so an untouched document is the same object in both), by key.
 */
export function changedIn<D>(
  before: Pack<D> | null,
  after: Pack<D> | null,
): { before: D | null; after: D | null }[] {
  const out: { before: D | null; after: D | null }[] = [];
  for (const [i, id] of (after?.ids ?? []).entries()) {
    const was = docIn(before, id);
    if (was !== after!.docs[i]) out.push({ before: was, after: after!.docs[i] });
  }
  for (const [i, id] of (before?.ids ?? []).entries()) {
    if (docIn(after, id) === null) out.push({ before: before!.docs[i], after: null });
  }
  return out;
}
