/** Calendar arithmetic in UTC: the daily limits count per UTC day and reset at 00:00 UTC. */

export const DAY_MS = 86_400_000;

/** The UTC day (YYYY-MM-DD) a moment falls on. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Whole seconds until the next 00:00 UTC, at least 1 (a Retry-After of 0 invites a busy loop). */
export function secondsUntilUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((DAY_MS - (((now % DAY_MS) + DAY_MS) % DAY_MS)) / 1000));
}

/** The last moment `isoUtc` formats itself (9999-12-31T23:59:59.999Z); past it, `Date` does. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

/** Each day's "YYYY-MM-DDT", by day number (bounded: cleared when it grows large). */
const dayPrefixes = new Map<number, string>();

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * `new Date(ms).toISOString()`, with the date part made once per day: the audit writes two
 * moments for each of hundreds of thousands of builds, and a `Date` and its formatting each time
 * were a twentieth of its tables pass. Moments before 1970, past year 9999 or not in whole
 * milliseconds go to `Date`.
 */
export function isoUtc(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_FOUR_DIGIT_YEAR_MS) {
    return new Date(ms).toISOString();
  }
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 4096) dayPrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  const t = ms - day * DAY_MS;
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor(t / 60_000) % 60;
  const s = Math.floor(t / 1000) % 60;
  return `${prefix}${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(t % 1000, 3)}Z`;
}
