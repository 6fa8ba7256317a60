/** Time is passed in, never read inside decisions, so tests can stand anywhere on the calendar. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
