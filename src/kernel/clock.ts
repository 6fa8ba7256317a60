/** Time is passed in, never read inside decisions, so tests can stand anywhere on the calendar. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/** A clock that stands still until moved: for tests that must not depend on today's date. */
export function fixedClock(
  ms: number,
): Clock & { set(ms: number): void; advance(ms: number): void } {
  let now = ms;
  const clock = () => now;
  return Object.assign(clock, {
    set(t: number) {
      now = t;
    },
    advance(d: number) {
      now += d;
    },
  });
}
