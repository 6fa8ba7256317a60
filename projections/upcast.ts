/**
 * Upcasting: an event written under an older schema version `v` is read as the current shape
 * before any fold sees it. The log is never rewritten: the stored event, its hash and the chain
 * stay exactly as they were written; only the copy handed to a fold is new.
 *
 * To change an event's shape: bump `v` where it is written, keep the old version's fields
 * readable in events/types.ts, and add one step here that turns version n into n + 1.
 */
import type { EventType, StoredEvent } from "../events/types.ts";

/** How long a v1 quote (recorded before quotes carried their expiry) stayed payable. */
export const V1_QUOTE_TTL_MS = 600_000;

type Step = (e: StoredEvent) => StoredEvent;

/** Per event type, the step from each old version to the next one. */
const STEPS: { [T in EventType]?: Record<number, Step> } = {
  AccessPaymentQuoted: {
    // v2 carries the quote's expiry; a v1 quote expired the then-default 600 s after it was made.
    1: (e) =>
      e.type === "AccessPaymentQuoted"
        ? { ...e, v: 2, data: { ...e.data, expiresAt: e.data.expiresAt ?? e.at + V1_QUOTE_TTL_MS } }
        : e,
  },
};

/** The event in its current shape (the same object when it already is). */
export function upcast(e: StoredEvent): StoredEvent {
  const steps = STEPS[e.type];
  if (!steps) return e;
  let out = e;
  for (let step = steps[out.v]; step; step = steps[out.v]) out = step(out);
  return out;
}
