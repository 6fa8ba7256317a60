import { projectionKey, PROJECTIONS } from "../events/keys.ts";
import type { StoredEvent } from "../events/types.ts";
import type { Projection } from "../events/projection.ts";
import { commitInBatches } from "./commit-batches.ts";
import { KeyBloomFilter, keyId } from "./key-hash.ts";
import { ProjectionsByType } from "./touches.ts";
import { getAll } from "./get-all.ts";

/**
 * Settled documents (`Projection.settled`) are written out this many at a time instead of being
 * held until the cache evicts them: the audit's cache then holds only the builds still waiting
 * for an outcome (its peak 8-20 MiB lower at a million events, BENCHMARKS.md).
 */
export const SETTLED_BATCH = 256;

/**
 * A cached document; `settled` as its projection said when it was last folded, `weight` the
 * documents it stands for (`Projection.count`: a pack holds several).
 */
interface Slot {
  key: Deno.KvKey;
  doc: unknown;
  weight: number;
  settled?: boolean;
}

/**
 * A fold whose documents live in a KV, behind a bounded write-back cache: memory stays flat
 * however many documents the projections hold, and the result can be listed in key order.
 * Used by the audit (into a scratch KV) and by events:import (into the KV being rebuilt). The
 * cache and the batches of settled documents are counted in documents, a pack weighing as many as
 * it holds.
 */
export class ProjectionFolder {
  readonly #cache = new Map<string, Slot>();
  /** The documents the cache holds (the sum of its slots' weights). */
  #weight = 0;
  /** Ids of cached documents that were settled when last folded, to be written out soon. */
  #settled: string[] = [];
  #settledWeight = 0;
  readonly #cacheSize: number;
  /** Ids ever written to the target; a miss outside it needs no KV read. Made on first spill. */
  #spilled: KeyBloomFilter | null = null;
  /**
   * The batch being committed in the background while the fold goes on (one at a time), by id:
   * a document evicted in it and needed again is read from here, not from the KV.
   */
  #inFlight = new Map<string, unknown>();
  #writing: Promise<void> = Promise.resolve();

  readonly #existing: boolean;
  readonly #byType: ProjectionsByType;
  readonly #byName: Map<string, Projection>;

  constructor(
    readonly target: Deno.Kv,
    readonly projections: Projection[],
    /** `existing`: the target already holds documents (an incremental audit's state). */
    opts: { cacheSize?: number; existing?: boolean } = {},
  ) {
    this.#cacheSize = Math.max(1, opts.cacheSize ?? 20_000);
    this.#existing = opts.existing ?? false;
    this.#byType = new ProjectionsByType(projections);
    this.#byName = new Map(projections.map((p) => [p.name, p]));
  }

  #weightOf(p: Projection | undefined, doc: unknown): number {
    return doc === null || doc === undefined ? 1 : (p?.count?.(doc as never) ?? 1);
  }

  #drop(id: string): Slot | undefined {
    const slot = this.#cache.get(id);
    if (slot) {
      this.#cache.delete(id);
      this.#weight -= slot.weight;
    }
    return slot;
  }

  /** Caches `slot` as the most recently folded, in place of any slot `id` had. */
  #put(id: string, slot: Slot): void {
    this.#drop(id);
    this.#cache.set(id, slot);
    this.#weight += slot.weight;
  }

  async apply(e: StoredEvent): Promise<void> {
    for (const p of this.#byType.of(e)) {
      for (const sub of p.keysOf(e)) {
        const key = projectionKey(p.name, sub);
        const id = keyId(key);
        const hit = this.#cache.get(id);
        const prev = hit ? hit.doc : await this.#load(id, key);
        const doc = p.evolve(prev as never, e, sub);
        const settled = doc !== null && (p.settled?.(doc as never) ?? false);
        const weight = this.#weightOf(p, doc);
        this.#put(id, { key, doc, settled, weight });
        if (settled) {
          this.#settled.push(id);
          this.#settledWeight += weight;
        }
      }
    }
    if (this.#settledWeight >= SETTLED_BATCH) await this.#writeSettled();
    if (this.#weight > this.#cacheSize) {
      // Evict a tenth at a time: one batched write instead of a KV commit per new document.
      await this.#evict(this.#cacheSize - Math.max(1, Math.floor(this.#cacheSize / 10)));
    }
  }

  /**
   * Reads the documents of `keys` into the cache (an `existing` target), ten to a read and a few
   * reads at a time, and returns their values (null: none); a document already in the cache is
   * not read, and its cached value is returned.
   */
  async preload(keys: Deno.KvKey[]): Promise<unknown[]> {
    const ids = keys.map(keyId);
    const todo = keys.flatMap((_, i) => this.#cache.has(ids[i]) ? [] : [i]);
    const read = await getAll(this.target, todo.map((i) => keys[i]));
    // Absent ones too: a new document then costs no read when its first event comes.
    todo.forEach((i, j) => {
      const p = this.#byName.get(keys[i][PROJECTIONS.length] as string);
      this.#put(ids[i], { key: keys[i], doc: read[j], weight: this.#weightOf(p, read[j]) });
    });
    return ids.map((id) => this.#cache.get(id)!.doc);
  }

  async #load(id: string, key: Deno.KvKey): Promise<unknown> {
    if (this.#existing) {
      if (this.#inFlight.has(id)) return this.#inFlight.get(id);
      return (await this.target.get(key)).value;
    }
    if (!this.#spilled?.has(id)) return null;
    if (this.#inFlight.has(id)) return this.#inFlight.get(id);
    return (await this.target.get(key)).value;
  }

  /** Writes out the cached documents still settled (a later touch may have unsettled one). */
  async #writeSettled(): Promise<void> {
    const out: [string, Slot][] = [];
    for (const id of this.#settled) {
      if (!this.#cache.get(id)?.settled) continue;
      out.push([id, this.#drop(id)!]);
    }
    this.#settled = [];
    this.#settledWeight = 0;
    await this.#write(out);
  }

  /** Writes out the least recently folded documents until the cache holds `low` or fewer. */
  async #evict(low: number): Promise<void> {
    const out: [string, Slot][] = [];
    for (const id of this.#cache.keys()) {
      if (this.#weight <= low) break;
      out.push([id, this.#drop(id)!]);
    }
    await this.#write(out);
  }

  /**
   * Writes every pending document; after this the target holds the whole fold and the cache is
   * let go (a later `apply` reads what it needs back from the target).
   */
  async flush(): Promise<void> {
    const out = [...this.#cache];
    this.#cache.clear();
    this.#weight = 0;
    this.#settled = [];
    this.#settledWeight = 0;
    await this.#write(out);
    await this.#writing;
    this.#inFlight.clear();
  }

  /**
   * Starts committing `docs` (by the id the cache holds them by) once the previous batch is in,
   * and returns without waiting for this one: the KV writes (most of a rebuild's time) overlap
   * with folding the next events.
   */
  async #write(docs: [string, Slot][]): Promise<void> {
    await this.#writing;
    if (docs.length === 0) return;
    this.#spilled ??= new KeyBloomFilter();
    const batch = new Map<string, unknown>();
    for (const [id, { doc }] of docs) {
      this.#spilled.add(id);
      batch.set(id, doc);
    }
    this.#inFlight = batch;
    this.#writing = commitInBatches(
      this.target,
      docs.map(([, { key, doc }]) => ({ key, value: doc })),
    ).then(() => {
      // Committed: the KV has these now; let them go unless the cache still holds them.
      if (this.#inFlight === batch) this.#inFlight = new Map();
    });
    // A failure surfaces at the next write or flush; keep it from counting as unhandled now.
    this.#writing.catch(() => {});
  }
}
