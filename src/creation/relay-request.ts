/**
 * The POST /v1/transactions body: the route validates with it and the OpenAPI document describes
 * it, so the two cannot disagree.
 */
import { z } from "zod";

/** A legacy transaction is at most 1232 bytes; its base64 fits well within this. */
export const MAX_RELAY_TRANSACTION_CHARS = 4096;

export const RelayRequest = z.strictObject({
  transaction: z.string().min(1, "base64 of the signed transaction")
    .max(MAX_RELAY_TRANSACTION_CHARS).describe("base64 of the signed transaction"),
});
