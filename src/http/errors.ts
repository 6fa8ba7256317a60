// Moved to src/kernel/errors.ts; re-export kept until the open branches land.
export * from "../kernel/errors.ts";
