/** Calendar arithmetic in UTC: the daily limits count per UTC day and reset at 00:00 UTC. */

export const DAY_MS = 86_400_000;

/** The UTC day (YYYY-MM-DD) a moment falls on. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Whole seconds until the next 00:00 UTC, at least 1 (a Retry-After of 0 invites a busy loop). */
export function secondsUntilUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((DAY_MS - (((now % DAY_MS) + DAY_MS) % DAY_MS)) / 1000));
}
