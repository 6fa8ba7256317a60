/**
 * A fold that keeps a document in memory only while events still touch it. A first pass over the
 * log records the last position that touches each document (`LastTouch`); the fold then hands a
 * document to the digest as soon as its last event is applied. Memory follows the documents
 * still open at one point of the log (a few thousand in the benchmark's million-event log) plus
 * 8 to 16 bytes a document for `LastTouch`, not the documents themselves.
 */
import { projectionKey } from "../events/keys.ts";
import type { StoredEvent } from "../events/types.ts";
import { type Held, ProjectionDigest } from "./doc-digest.ts";
import { KeyFingerprintMap, keyId } from "./key-hash.ts";
import type { Projection } from "./projection.ts";

/** The last log position that touches each document of `projections`. */
export class LastTouch {
  readonly #map = new KeyFingerprintMap();

  constructor(readonly projections: Projection[]) {}

  record(e: StoredEvent): void {
    for (const p of this.projections) {
      for (const sub of p.keysOf(e)) {
        this.#map.setMax(keyId(projectionKey(p.name, sub)), e.position);
      }
    }
  }

  /**
   * Never earlier than the true last touch: ids that share a fingerprint share the later
   * position, which only keeps a document open longer.
   */
  of(id: string): number {
    return this.#map.get(id) ?? Infinity;
  }
}

export class DigestFolder {
  readonly digest: ProjectionDigest;
  readonly #open = new Map<string, { key: Deno.KvKey; doc: unknown }>();
  readonly #maxOpen: number;
  readonly #hold: Held | null;
  #lastTouch: LastTouch | null;

  constructor(
    readonly projections: Projection[],
    lastTouch: LastTouch,
    salt: string,
    opts: { maxOpen?: number; hold?: Held } = {},
  ) {
    this.#hold = opts.hold ?? null;
    this.#lastTouch = lastTouch;
    this.digest = new ProjectionDigest(salt);
    this.#maxOpen = Math.max(1, opts.maxOpen ?? 50_000);
  }

  /** False when more than `maxOpen` documents would be open: the caller must fold another way. */
  apply(e: StoredEvent): boolean {
    const done: string[] = [];
    for (const p of this.projections) {
      for (const sub of p.keysOf(e)) {
        const key = projectionKey(p.name, sub);
        const id = keyId(key);
        const doc = p.evolve((this.#open.get(id)?.doc ?? null) as never, e, sub);
        this.#open.set(id, { key, doc });
        if (this.#lastTouch!.of(id) <= e.position) done.push(id);
      }
    }
    // After the whole event, in case it touches one document twice.
    for (const id of done) {
      const slot = this.#open.get(id);
      if (!slot) continue;
      this.#open.delete(id);
      this.#add(id, slot);
    }
    return this.#open.size <= this.#maxOpen;
  }

  /** Adds what is still open; after this the digest covers the whole fold. No apply after. */
  finish(): ProjectionDigest {
    this.#lastTouch = null;
    for (const [id, slot] of this.#open) this.#add(id, slot);
    this.#open.clear();
    return this.digest;
  }

  #add(id: string, slot: { key: Deno.KvKey; doc: unknown }): void {
    if (!this.#hold?.takes(slot.key, slot.doc, id)) this.digest.add(slot.key, slot.doc, id);
  }
}
