/**
 * Which folds an event reaches, by event type. A fold over the whole log (replay, the audit)
 * otherwise asks each of the nineteen projections about every event, and all but a few answer
 * "not mine"; the answer depends only on the event's type, so it is worked out once per type.
 * Projections without a `handles` list (the audit's own folds) see every event.
 */
import type { StoredEvent } from "../events/types.ts";
import type { Projection } from "../events/projection.ts";

export class ProjectionsByType {
  readonly #byType = new Map<string, Projection[]>();

  constructor(readonly projections: readonly Projection[]) {}

  /** The projections that may touch documents for `e`, in the order given. */
  of(e: StoredEvent): Projection[] {
    let list = this.#byType.get(e.type);
    if (!list) {
      list = this.projections.filter((p) => !p.handles || p.handles.includes(e.type));
      this.#byType.set(e.type, list);
    }
    return list;
  }
}

/** The event types any of `projections` folds; null when one of them sees every event. */
export function typesFolded(projections: readonly Projection[]): ReadonlySet<string> | null {
  const types = new Set<string>();
  for (const p of projections) {
    if (!p.handles) return null;
    for (const t of p.handles) types.add(t);
  }
  return types;
}
