import type { EventType, StoredEvent } from "./types.ts";

/**
 * A read model as a pure fold, as the store sees it: defined beside the log so the store needs
 * nothing from projections/ (they depend on it, never the other way). The store applies it inline, in the same KV commit as the events;
 * replay applies the very same functions to the log alone.
 */
export interface Projection<D = unknown> {
  name: string;
  /**
   * The event types this fold reads, declared beside its evolve. The registry (index.ts) folds
   * only these into it, and a test fails when an event type is read by no projection and is not
   * on the registry's ignored list. Optional here only for folds outside the registry (the
   * audit's own); every registered projection declares it.
   */
  handles?: readonly EventType[];
  /** The documents (keys below the projection's own prefix) that this event changes. */
  keysOf(event: StoredEvent): Deno.KvKey[];
  /** The next document; null deletes it. Must be pure: no clock, no I/O. */
  evolve(doc: D | null, event: StoredEvent, key: Deno.KvKey): D | null;
  /**
   * True when no later event is expected to change `doc` (a build with its outcome). A fold that
   * caches documents writes such a one out at once instead of holding it; a later event that does
   * touch it still finds it. Only a hint: the result is the same without it.
   */
  settled?(doc: D): boolean;
  /**
   * How many documents `doc` stands for in a fold's cache: a pack of several (projections/
   * packed.ts) weighs as much as the documents in it. 1 when unset.
   */
  count?(doc: D): number;
}

/** A projection that says which events it folds: what the registry accepts. */
export type DeclaredProjection<D = unknown> = Projection<D> & { handles: readonly EventType[] };
