/**
 * Clocks for tests that count per hour or per day: the harness's default clock is the wall clock,
 * so two requests a test expects on one day could fall on two around 00:00 UTC.
 */
import type { Clock } from "../../src/kernel/clock.ts";

/** Wall-clock speed from 20 minutes into the current UTC hour: no hourly or daily window rolls. */
export function midHourClock(): Clock {
  const start = Date.now();
  const hour = 3_600_000;
  const t0 = Math.floor(start / hour) * hour + 20 * 60_000;
  return () => t0 + (Date.now() - start);
}

/**
 * Harness options with one mid-hour clock for the service and the embedded chain, so block times
 * (a payment's lateness against its quote, the Pyth publish time) follow the same clock.
 */
export function midHourHarness(): { clock: Clock; chain: { now: Clock } } {
  const clock = midHourClock();
  return { clock, chain: { now: clock } };
}
