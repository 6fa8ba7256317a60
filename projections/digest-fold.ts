/**
 * A fold that keeps a document in memory only while events still touch it. A first pass over the
 * log records the last position that touches each document (`LastTouch`); the fold then hands a
 * document to the digest as soon as its last event is applied. Memory follows the documents
 * still open at one point of the log (a few thousand in the benchmark's million-event log) plus
 * 8 to 16 bytes for each document `LastTouch` keeps (those touched more than once) and, while the
 * log is first read, 8 to 16 bits for each of the others, not the documents themselves.
 */
import { projectionKey } from "../events/keys.ts";
import type { StoredEvent } from "../events/types.ts";
import { type Held, ProjectionDigest } from "./doc-digest.ts";
import {
  FingerprintFilter,
  KeyFingerprintMap,
  keyId,
  nameSeed,
  partsFingerprint,
} from "./key-hash.ts";
import type { Projection } from "../events/projection.ts";
import { ProjectionsByType } from "./touches.ts";

/** First touches the filter is sized for, per event: the benchmark's mix has about two. */
const FIRST_TOUCHES_PER_EVENT = 2;

/**
 * A document handed to the digest costs about what four touches do: measured alone at a million
 * events, a touch took 0.4-0.6 µs (the usage projection: 528,723 touches of 662 documents), a
 * document 1.7-4.5 µs more (its JSON text and BLAKE3; the larger the document, the more). Split by
 * touches alone, the thread with the many small index documents took 8.2-9.0 s against the other's
 * 5.5-6.0 s; by this work, 7.6 s against 7.2 s.
 */
const DOCUMENT_WORK = 4;

/** One projection's last touches, as sent to another thread (the arrays are transferred). */
export interface LastTouchPart {
  name: string;
  fingerprints: Uint32Array;
  values: Uint32Array;
  size: number;
}

/** One projection's part of `LastTouch`: its last touches, and its touches and documents. */
interface Recorded {
  p: Projection;
  /** `nameSeed` of its name. */
  seed: number;
  map: KeyFingerprintMap;
  touches: number;
  documents: number;
}

/**
 * The last log position that touches each document of `projections`, one map per projection so
 * that the fold can be split between threads by projection (`take`), and the touches and
 * documents each projection had (how much folding it will take: `work`).
 *
 * A document's first touch only marks it seen (`FingerprintFilter`); the maps take its later
 * touches. Most documents are touched once (each build's entries in the index projections: five
 * of the eight largest at a million events), and the maps were the largest part of the chain
 * pass's memory; a document the maps do not hold has no touch after the one being folded.
 */
export class LastTouch {
  /** Each projection's last touches and counts, by name. */
  readonly #recorded = new Map<string, Recorded>();
  readonly #byType: ProjectionsByType<Recorded>;
  /** Let go of once the touches are recorded (`recorded`): the fold does not need it. */
  #seen: FingerprintFilter | null;

  /** `events`: about how many the log holds, to size the filter of first touches by. */
  constructor(
    readonly projections: Projection[],
    parts: LastTouchPart[] = [],
    events = 0,
  ) {
    this.#seen = new FingerprintFilter(events * FIRST_TOUCHES_PER_EVENT);
    const given = new Map(parts.map((part) => [part.name, part]));
    for (const p of projections) {
      const part = given.get(p.name);
      this.#recorded.set(p.name, {
        p,
        seed: nameSeed(p.name),
        map: part
          ? KeyFingerprintMap.from(part.fingerprints, part.values, part.size)
          : new KeyFingerprintMap(1 << 10),
        touches: 0,
        documents: 0,
      });
    }
    this.#byType = new ProjectionsByType([...this.#recorded.values()], (r) => r.p);
  }

  record(e: StoredEvent): void {
    for (const r of this.#byType.of(e)) {
      for (const sub of r.p.keysOf(e)) {
        const f = partsFingerprint(r.seed, sub);
        // Mistaken for seen now and then: that touch is kept too, as a later one would be.
        if (this.#seen!.add(f)) r.map.setMaxFingerprint(f, e.position);
        else r.documents++;
        r.touches++;
      }
    }
  }

  /** Touches recorded, per projection. */
  get touches(): Map<string, number> {
    return new Map([...this.#recorded].map(([name, r]) => [name, r.touches]));
  }

  /** Documents first touched, per projection (a first touch mistaken for a later one is missed). */
  get documents(): Map<string, number> {
    return new Map([...this.#recorded].map(([name, r]) => [name, r.documents]));
  }

  /**
   * The last touch of a document touched at `now`, by its key's `partsFingerprint`: never earlier
   * than the true one (keys that share a fingerprint share the later position, which only keeps a
   * document open longer), and `now` when no touch came after the document's first. Infinity for
   * a projection not recorded.
   */
  ofFingerprint(name: string, f: number, now: number): number {
    const r = this.#recorded.get(name);
    if (!r) return Infinity;
    return r.map.getFingerprint(f) ?? now;
  }

  /**
   * How much folding each projection will take, in touches: a touch applies an event to a
   * document, and a document is also turned into its text and hashed once, at its last touch.
   */
  get work(): Map<string, number> {
    const work = new Map<string, number>();
    for (const [name, r] of this.#recorded) {
      work.set(name, r.touches + DOCUMENT_WORK * r.documents);
    }
    return work;
  }

  /** Every touch is recorded: the filter of first touches goes (2 MiB at a million events). */
  recorded(): void {
    this.#seen = null;
  }

  /** Documents the maps hold (touched more than once, or first touches mistaken for later ones). */
  get kept(): number {
    let n = 0;
    for (const r of this.#recorded.values()) n += r.map.size;
    return n;
  }

  /** The maps of `names`, taken out of this one to be sent elsewhere (their arrays transfer). */
  take(names: string[]): LastTouchPart[] {
    return names.map((name) => {
      const r = this.#recorded.get(name);
      if (!r) throw new Error(`no last touches for projection ${name}`);
      this.#recorded.delete(name);
      return { name, ...r.map.parts };
    });
  }
}

/**
 * Splits the projections between this thread and another that must read the log again first:
 * the other gets about `share` of the work (`LastTouch.work`; the largest projections first,
 * each whole).
 */
export function splitByWork(work: Map<string, number>, share: number): {
  here: string[];
  there: string[];
} {
  const total = [...work.values()].reduce((a, b) => a + b, 0);
  const here: string[] = [];
  const there: string[] = [];
  let away = 0;
  for (const [name, n] of [...work].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    if (n > 0 && away + n <= share * total) {
      there.push(name);
      away += n;
    } else here.push(name);
  }
  return { here, there };
}

/** A document the fold holds until its last touch; its key is made only when it is handed on. */
interface Open {
  name: string;
  sub: Deno.KvKey;
  doc: unknown;
  /**
   * Its last touch, looked up when it is opened: the last touches do not change during the fold,
   * and a lookup per touch was a cache miss or two in a map of megabytes each time.
   */
  last: number;
  /** Its slot in `OpenDocs`, and the next open document in that slot (rarely any). */
  slot: number;
  next: Open | null;
  closed: boolean;
}

/**
 * The documents the fold holds, by the fingerprint of their key's parts (`partsFingerprint`, which
 * the last touches are looked up by too); the rare documents that share a slot are chained and
 * told apart by their parts. A map by a string made from the parts cost a new string and its hash
 * for each of the 4.3 million touches of a million-event fold.
 */
class OpenDocs {
  readonly #slots = new Map<number, Open>();
  size = 0;

  /** 30 bits of the fingerprint: a small integer, which a Map hashes without allocating. */
  static slot = (f: number) => f & 0x3fffffff;

  get(slot: number, name: string, sub: Deno.KvKey): Open | null {
    let o = this.#slots.get(slot) ?? null;
    while (o && !(o.name === name && sameParts(o.sub, sub))) o = o.next;
    return o;
  }

  add(slot: number, name: string, sub: Deno.KvKey, doc: unknown, last: number): Open {
    const next = this.#slots.get(slot) ?? null;
    const o = { name, sub, doc, last, slot, next, closed: false };
    this.#slots.set(slot, o);
    this.size++;
    return o;
  }

  delete(o: Open): void {
    const first = this.#slots.get(o.slot)!;
    if (first === o) {
      if (o.next) this.#slots.set(o.slot, o.next);
      else this.#slots.delete(o.slot);
    } else {
      let before = first;
      while (before.next !== o) before = before.next!;
      before.next = o.next;
    }
    o.closed = true;
    this.size--;
  }

  *values(): Generator<Open> {
    for (let o of this.#slots.values()) {
      for (; o; o = o.next!) yield o;
    }
  }

  clear(): void {
    this.#slots.clear();
    this.size = 0;
  }
}

/** Whether two keys' parts are the same (as KV tells keys apart: -0 is not 0, bytes by value). */
function sameParts(a: Deno.KvKey, b: Deno.KvKey): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i], y = b[i];
    if (Object.is(x, y)) continue;
    if (!(x instanceof Uint8Array && y instanceof Uint8Array) || x.length !== y.length) {
      return false;
    }
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}

export class DigestFolder {
  readonly digest: ProjectionDigest;
  /** The full key id is made once per document, when it is added. */
  readonly #open = new OpenDocs();
  readonly #maxOpen: number;
  readonly #hold: Held | null;
  /** Each projection with its `nameSeed`. */
  readonly #byType: ProjectionsByType<{ p: Projection; seed: number }>;
  #lastTouch: LastTouch | null;

  constructor(
    readonly projections: Projection[],
    lastTouch: LastTouch,
    salt: string,
    opts: { maxOpen?: number; hold?: Held } = {},
  ) {
    this.#hold = opts.hold ?? null;
    this.#byType = new ProjectionsByType(
      projections.map((p) => ({ p, seed: nameSeed(p.name) })),
      (s) => s.p,
    );
    this.#lastTouch = lastTouch;
    this.digest = new ProjectionDigest(salt);
    this.#maxOpen = Math.max(1, opts.maxOpen ?? 50_000);
  }

  /** False when more than `maxOpen` documents would be open: the caller must fold another way. */
  apply(e: StoredEvent): boolean {
    let done: Open[] | null = null;
    for (const { p, seed } of this.#byType.of(e)) {
      for (const sub of p.keysOf(e)) {
        const f = partsFingerprint(seed, sub);
        const slot = OpenDocs.slot(f);
        let open = this.#open.get(slot, p.name, sub);
        const doc = p.evolve((open?.doc ?? null) as never, e, sub);
        if (open) open.doc = doc;
        else {
          const last = this.#lastTouch!.ofFingerprint(p.name, f, e.position);
          open = this.#open.add(slot, p.name, sub, doc, last);
        }
        if (open.last <= e.position) (done ??= []).push(open);
      }
    }
    // After the whole event, in case it touches one document twice.
    if (done) {
      for (const open of done) {
        if (open.closed) continue;
        this.#open.delete(open);
        this.#add(open);
      }
    }
    return this.#open.size <= this.#maxOpen;
  }

  /** Adds what is still open; after this the digest covers the whole fold. No apply after. */
  finish(): ProjectionDigest {
    this.#lastTouch = null;
    for (const slot of this.#open.values()) this.#add(slot);
    this.#open.clear();
    return this.digest;
  }

  #add(slot: Open): void {
    const key = projectionKey(slot.name, slot.sub);
    const id = keyId(key);
    if (!this.#hold?.takes(key, slot.doc, id)) this.digest.add(key, slot.doc, id);
  }
}
