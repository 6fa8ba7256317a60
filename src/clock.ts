// Moved to src/kernel/clock.ts; re-export kept until the open branches land.
export * from "./kernel/clock.ts";
