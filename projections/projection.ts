import type { StoredEvent } from "../events/types.ts";

/**
 * A read model as a pure fold. The store applies it inline, in the same KV commit as the events;
 * replay applies the very same functions to the log alone.
 */
export interface Projection<D = unknown> {
  name: string;
  /** The documents (keys below the projection's own prefix) that this event changes. */
  keysOf(event: StoredEvent): Deno.KvKey[];
  /** The next document; null deletes it. Must be pure: no clock, no I/O. */
  evolve(doc: D | null, event: StoredEvent, key: Deno.KvKey): D | null;
}
