/**
 * The events of a token update (POST /v1/tokens/{mint}/update), defined once as schemas: the
 * update record (projections/updates.ts), its view and the OpenAPI document are made from them.
 * Each update has its own stream, `update-<updateId>`, and names the build whose token it changes.
 */
import { z } from "zod";
import { base58, digits } from "../src/kernel/described.ts";

/** What a token is: its text and who holds each authority (null: nobody, revoked). */
export const TokenView = z.object({
  name: z.string(),
  symbol: z.string(),
  uri: z.string(),
  updateAuthority: base58("metadata update authority").nullable().describe(
    "null: nobody (Token-2022 immutable metadata); a Metaplex account keeps one when immutable",
  ),
  isMutable: z.boolean(),
  mintAuthority: base58("mint authority").nullable().describe("null: revoked"),
  freezeAuthority: base58("freeze authority").nullable().describe("null: revoked"),
});
export type TokenView = z.infer<typeof TokenView>;

export const TokenUpdateBuiltData = z.object({
  updateId: z.string().describe("the update's id (32 hex characters)"),
  buildId: z.number().int(),
  keyId: z.string(),
  purchaseId: z.string(),
  mint: base58("mint"),
  tokenProgram: z.enum(["spl-token", "token-2022"]),
  authority: base58("the signer: the current authority of every change"),
  /** The request's change fields, in the order the API lists them. */
  changes: z.array(z.string()),
  before: TokenView,
  after: TokenView,
  blockhash: z.string(),
  lastValidBlockHeight: z.number().int(),
  /** SHA-256 (hex) of the exact message bytes the authority signs. */
  messageHash: z.string(),
  /**
   * The compute budget set: a landed transaction is this update's when its message, with these
   * two values put back (a wallet may raise the priority fee), hashes to `messageHash`.
   */
  unitLimit: z.number().int(),
  microLamports: digits("priority price per compute unit"),
  /** Our fee (UPDATE_FEE_USD); 0 with no transfer and no reference when updates are free. */
  feeLamports: digits("our fee"),
  feeUsd: z.number(),
  solUsd: z.number().nullable(),
  treasury: base58("treasury"),
  reference: base58("read-only reference key of the fee transfer").nullable(),
  rentTopUpLamports: digits("Token-2022: lamports added to the mint for its new size"),
  totalLamports: digits("everything the signer spends if it lands"),
});
export type TokenUpdateBuiltData = z.infer<typeof TokenUpdateBuiltData>;

export const TokenUpdateLandedData = z.object({
  updateId: z.string(),
  buildId: z.number().int(),
  keyId: z.string(),
  mint: base58("mint"),
  signature: z.string(),
  slot: z.number().int(),
  blockTime: z.number().int().nullable(),
  /** What the landed transaction paid the treasury (0 without a fee). */
  feeLamportsSeen: digits("fee seen"),
  /** The token after the update, as the landed transaction set it. */
  after: TokenView,
  /**
   * What the update changed (the fields of `after` that differ from its `before`): another update
   * built from the same state changes other fields, and the token's current state applies each
   * landing's own changes, later slots winning.
   */
  set: TokenView.partial(),
});
export type TokenUpdateLandedData = z.infer<typeof TokenUpdateLandedData>;

/**
 * The relay (POST /v1/transactions) sent the update's transaction, signed by its authority: the
 * record shows its signature, and the relay's follow-up job records its landing or its expiry.
 */
export const TokenUpdateSubmittedData = z.object({
  updateId: z.string(),
  buildId: z.number().int(),
  keyId: z.string(),
  mint: base58("mint"),
  signature: z.string(),
  via: z.literal("relay"),
});
export type TokenUpdateSubmittedData = z.infer<typeof TokenUpdateSubmittedData>;

export const TokenUpdateFailedData = z.object({
  updateId: z.string(),
  buildId: z.number().int(),
  keyId: z.string(),
  mint: base58("mint"),
  signature: z.string().nullable(),
  reason: z.string(),
});
export type TokenUpdateFailedData = z.infer<typeof TokenUpdateFailedData>;
