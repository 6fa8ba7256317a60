// Moved to src/kernel/logger.ts; re-export kept until the open branches land.
export * from "../kernel/logger.ts";
