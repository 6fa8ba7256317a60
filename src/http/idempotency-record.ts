// Moved to src/idempotency/record.ts; re-export kept until the open branches land.
export * from "../idempotency/record.ts";
