/**
 * The audit's fold: the log's events applied in order to the documents of a set of folds (the
 * projections, and the audit's own), the way the store applies them on append. A document lives
 * in memory from its first event to its last one and is then handed on (`onDone`), so memory holds
 * the documents open at one point of the log, not all of them. Where each document's last event is
 * comes from a first pass over the log (`LastTouches`).
 */
import { projectionKey } from "../../events/keys.ts";
import type { Projection } from "../../events/projection.ts";
import type { StoredEvent } from "../../events/types.ts";

/** One document an event changes. `id` names it in maps and in the audit's findings. */
export interface Touch {
  fold: Projection;
  sub: Deno.KvKey;
  key: Deno.KvKey;
  id: string;
}

/** Numbers JSON cannot tell apart from others (-0, NaN, infinities) and bigints, spelled apart. */
const oddPart = (_k: string, v: unknown) =>
  typeof v === "bigint"
    ? `${v}n`
    : typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))
    ? { number: String(Object.is(v, -0) ? "-0" : v) }
    : v;

/** A KV key as text: `["p","build",7]`. */
export const keyText = (key: Deno.KvKey): string =>
  key.some((k) => typeof k === "bigint" || (typeof k === "number" && !Number.isSafeInteger(k)))
    ? JSON.stringify(key, oddPart)
    : JSON.stringify(key);

const isKeyPart = (k: unknown) =>
  ["string", "number", "bigint", "boolean"].includes(typeof k) || k instanceof Uint8Array;

/** The documents each event changes, for a fixed set of folds. */
export class Touches {
  readonly #byType = new Map<string, Projection[]>();

  constructor(readonly folds: Projection[]) {}

  of(e: StoredEvent): Touch[] {
    // A damaged record (no type or data) changes nothing: the chain check reports it.
    if (typeof e.type !== "string" || typeof e.data !== "object" || e.data === null) return [];
    let folds = this.#byType.get(e.type);
    if (!folds) {
      folds = this.folds.filter((f) => !f.handles || f.handles.includes(e.type));
      this.#byType.set(e.type, folds);
    }
    const out: Touch[] = [];
    for (const fold of folds) {
      for (const sub of fold.keysOf(e)) {
        // A tampered event can name a key no KV holds; its fold reports it (`Fold.apply`).
        if (!sub.every(isKeyPart)) throw new Error(`a key of ${fold.name} is not a KV key`);
        const key = projectionKey(fold.name, sub);
        out.push({ fold, sub, key, id: keyText(key) });
      }
    }
    return out;
  }

  /** `of`, or none for an event whose documents cannot be named (the fold pass reports it). */
  ofOrNone(e: StoredEvent): Touch[] {
    try {
      return this.of(e);
    } catch {
      return [];
    }
  }
}

/** A 30-bit hash of a document's id: two ids that share one only keep a document open longer. */
export function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

/**
 * The position of each document's last event, by `idHash`: an open-addressing table in two typed
 * arrays (8 bytes a slot, half of them free), outside the JavaScript heap, instead of a Map of
 * millions of entries that the garbage collector walks and copies as it grows.
 */
export class LastTouches {
  #hashes = new Int32Array(1 << 16);
  #positions = new Int32Array(1 << 16);
  #used = 0;

  /** The slot of `h`: where it is, or the free one where it goes. */
  #slot(h: number): number {
    const mask = this.#hashes.length - 1;
    let i = h & mask;
    // Stored as h + 1, so 0 marks a free slot.
    while (this.#hashes[i] !== 0 && this.#hashes[i] !== h + 1) i = (i + 1) & mask;
    return i;
  }

  note(touches: Touch[], position: number): void {
    for (const t of touches) {
      const h = idHash(t.id);
      let i = this.#slot(h);
      if (this.#hashes[i] === 0) {
        if (++this.#used * 2 > this.#hashes.length) {
          this.#grow();
          i = this.#slot(h);
        }
        this.#hashes[i] = h + 1;
      }
      this.#positions[i] = position;
    }
  }

  isLast(t: Touch, position: number): boolean {
    const i = this.#slot(idHash(t.id));
    return this.#hashes[i] !== 0 && this.#positions[i] === position;
  }

  #grow(): void {
    const [hashes, positions] = [this.#hashes, this.#positions];
    this.#hashes = new Int32Array(hashes.length * 2);
    this.#positions = new Int32Array(hashes.length * 2);
    for (let j = 0; j < hashes.length; j++) {
      if (hashes[j] === 0) continue;
      const i = this.#slot(hashes[j] - 1);
      this.#hashes[i] = hashes[j];
      this.#positions[i] = positions[j];
    }
  }
}

/** A document as the fold leaves it; `doc` null: it does not exist. */
export interface Folded {
  key: Deno.KvKey;
  id: string;
  fold: string;
  doc: unknown;
}

/**
 * Folds events into the open documents; a document is done after its last event (`last`), or at
 * `finish` when no `last` is given. An event a fold cannot take (a tampered one that makes it
 * throw) is reported to `onError` and leaves the documents as they were.
 */
export class Fold {
  readonly #open = new Map<string, Folded>();

  constructor(
    readonly touches: Touches,
    readonly onDone: (d: Folded) => void | Promise<void>,
    readonly opts: {
      last?: LastTouches;
      /** Only these documents are folded (the incremental audit's). */
      only?: ReadonlySet<string>;
      onError?: (position: number, e: unknown) => void;
    } = {},
  ) {}

  async apply(e: StoredEvent): Promise<void> {
    const only = this.opts.only;
    // Folded first, kept after: an event that makes a fold throw changes nothing.
    const changed = new Map<string, { t: Touch; d: Folded; doc: unknown }>();
    try {
      for (const t of this.touches.of(e)) {
        if (only && !only.has(t.id)) continue;
        const c = changed.get(t.id);
        const d = c?.d ?? this.#open.get(t.id) ??
          { key: t.key, id: t.id, fold: t.fold.name, doc: null };
        changed.set(t.id, { t, d, doc: t.fold.evolve(c ? c.doc : d.doc, e, t.sub) });
      }
    } catch (err) {
      this.opts.onError?.(e.position, err);
      return;
    }
    for (const { t, d, doc } of changed.values()) {
      d.doc = doc;
      if (this.opts.last?.isLast(t, e.position)) {
        this.#open.delete(t.id);
        await this.onDone(d);
      } else this.#open.set(t.id, d);
    }
  }

  /** The documents still open (none, with `last`, unless two ids shared a hash). */
  async finish(): Promise<void> {
    for (const d of this.#open.values()) await this.onDone(d);
    this.#open.clear();
  }
}
