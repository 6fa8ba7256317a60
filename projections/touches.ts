/**
 * Which folds an event reaches, by event type. A fold over the whole log (replay, the audit)
 * otherwise asks each of the nineteen projections about every event, and all but a few answer
 * "not mine"; the answer depends only on the event's type, so it is worked out once per type.
 * Projections without a `handles` list (the audit's own folds) see every event.
 */
import type { StoredEvent } from "../events/types.ts";
import type { Projection } from "../events/projection.ts";

export class ProjectionsByType<T = Projection> {
  readonly #byType = new Map<string, T[]>();

  /**
   * `projectionOf`: the projection of each of `items`, when they are not projections themselves
   * (a fold's own bookkeeping for each, found with no lookup by name).
   */
  constructor(
    readonly items: readonly T[],
    readonly projectionOf: (item: T) => Projection = (item) => item as Projection,
  ) {}

  /** The items whose projections may touch documents for `e`, in the order given. */
  of(e: StoredEvent): T[] {
    let list = this.#byType.get(e.type);
    if (!list) {
      list = this.items.filter((item) => {
        const p = this.projectionOf(item);
        return !p.handles || p.handles.includes(e.type);
      });
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
