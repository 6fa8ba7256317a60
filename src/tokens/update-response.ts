/**
 * What POST /v1/tokens/{mint}/update and GET /v1/tokens/{mint}/updates/{updateId} answer, as the
 * zod schemas the handlers shape their answers through and the OpenAPI document is made from.
 */
import { z } from "zod";
import { type TokenUpdateBuiltData, TokenView } from "../../events/token-update.ts";
import { EXPIRES_IN_SECONDS } from "./build-verdict.ts";
import type { UpdateCosts } from "./update-costs.ts";
import { base58, digits } from "../kernel/described.ts";
import type { UpdateDoc } from "../../projections/updates.ts";

export const UpdateCostsSchema = z.object({
  networkFeeLamports: digits("base fee of the one signature"),
  priorityFeeLamports: digits("priority fee: the compute-unit limit times the unit price set"),
  rentTopUpLamports: digits(
    "Token-2022: what the mint needs for its new size (a longer field); 0 otherwise",
  ),
  serviceFeeLamports: digits("our fee (UPDATE_FEE_USD; 0 by default)"),
  totalLamports: digits("the sum: exactly what leaves the authority's balance if it lands"),
}).describe("Every lamport the authority spends if the transaction lands.");

export const TokenUpdateBuilt = z.object({
  updateId: z.string().describe("the update's id: GET /v1/tokens/{mint}/updates/{updateId}"),
  mint: base58("the token's mint"),
  transaction: z.string().describe("base64 unsigned legacy transaction"),
  transactionEncoding: z.literal("base64"),
  format: z.literal("legacy-unsigned"),
  requiredSigner: base58("the authority, the only required signer and fee payer"),
  recentBlockhash: z.string(),
  lastValidBlockHeight: z.number().int(),
  expiresInSeconds: z.number().int().describe("validity window in seconds (about 60)"),
  messageHash: z.string().describe("SHA-256 (hex) of the message to sign"),
  fee: z.object({
    usd: z.number(),
    lamports: digits("fee in lamports (0: no fee transfer)"),
    treasury: base58("address receiving the fee"),
    reference: base58("read-only key marking the fee transfer").nullable().describe(
      "null when updates are free",
    ),
  }),
  costs: UpdateCostsSchema,
  changes: z.array(z.string()).describe("the request's fields that change the token"),
  before: TokenView.describe("the token as the chain holds it now"),
  after: TokenView.describe("the token once this transaction lands"),
});
export type UpdateBuiltResponse = z.infer<typeof TokenUpdateBuilt>;

/** The 201 of an update, from what its `TokenUpdateBuilt` records and the transaction issued. */
export const updateBuiltView = (
  d: TokenUpdateBuiltData,
  transaction: string,
  costs: UpdateCosts,
): UpdateBuiltResponse => ({
  updateId: d.updateId,
  mint: d.mint,
  transaction,
  transactionEncoding: "base64",
  format: "legacy-unsigned",
  requiredSigner: d.authority,
  recentBlockhash: d.blockhash,
  lastValidBlockHeight: d.lastValidBlockHeight,
  expiresInSeconds: EXPIRES_IN_SECONDS,
  messageHash: d.messageHash,
  fee: { usd: d.feeUsd, lamports: d.feeLamports, treasury: d.treasury, reference: d.reference },
  costs,
  changes: d.changes,
  before: d.before,
  after: d.after,
});

/** GET /v1/tokens/{mint}/updates/{updateId}: the update's record. */
export const TokenUpdateRecord = z.object({
  updateId: z.string(),
  mint: base58("the token's mint"),
  status: z.enum(["built", "submitted", "landed", "failed"]).describe(
    "built: not seen on chain yet; submitted: sent by the relay (POST /v1/transactions), which " +
      "records its outcome; landed: succeeded and read back; failed: landed with an " +
      "error or expired",
  ),
  signature: z.string().nullable(),
  authority: base58("the signer"),
  changes: z.array(z.string()),
  before: TokenView,
  after: TokenView,
  feeLamports: digits("our fee"),
  feeLamportsSeen: digits("fee the landed transaction paid").nullable(),
  totalLamports: digits("what the signer spends if it lands"),
  reason: z.string().nullable().describe("why it failed"),
  createdAt: z.number().int().describe("Unix seconds"),
  landedAt: z.number().int().nullable().describe("Unix seconds"),
});
export type TokenUpdateRecord = z.infer<typeof TokenUpdateRecord>;

export const updateRecord = (d: UpdateDoc): TokenUpdateRecord => TokenUpdateRecord.parse(d);
