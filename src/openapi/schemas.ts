/**
 * Zod schemas for the responses the OpenAPI document describes. Where a handler's answer is typed
 * by or shaped through its schema, the schema lives beside the handler and is re-exported here
 * (the build record from src/tokens, POST /v1/tokens's answer from src/tokens, the relay request
 * from src/creation); the rest the handlers build as plain objects. Tests parse real responses
 * with these, so the document cannot drift from the service unseen.
 */
import { z } from "zod";
import { base58, digits } from "../kernel/described.ts";
import { ERROR_CODES } from "../kernel/errors.ts";
import { KeyLimits, PricingLimits } from "../pricing/published-limits.ts";

export const ErrorBody = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES).describe("machine-readable error code"),
    message: z.string().describe("human-readable explanation"),
    fields: z.record(z.string(), z.unknown()).describe(
      "for invalid_request: each missing or invalid field (dot path for nested members) with a " +
        "message; otherwise usually empty. At most 20 are listed",
    ),
    fieldsOmitted: z.number().int().optional().describe(
      "present when more fields were invalid than are listed: how many were left out",
    ),
  }),
}).describe("The body of every error response");

export const Pricing = z.object({
  network: z.string().describe("network name (localnet, devnet, mainnet-beta)"),
  access: z.object({ usd: z.number().describe("one-time access fee in USD") }),
  token: z.object({
    usd: z.number().describe("per-token fee in USD"),
    lamports: digits("per-token fee in lamports at the current SOL price"),
    solUsd: z.number().describe("SOL price in USD used"),
    networkLamports: digits(
      "what the network takes per token besides the fee: the network fee and the rent of the " +
        "mint, token account and metadata account plus the Token Metadata program's fee, from " +
        "the cluster's rent (a build's costs add any priority fee); absent when the rent can't " +
        "be read",
    ).optional(),
    token2022NetworkLamports: digits(
      'the same for a Token-2022 token (`tokenProgram: "token-2022"`): the network fee and ' +
        "the rent of the mint, which holds the metadata, and of the token account; no metadata " +
        "account and no Token Metadata program fee. The mint's size follows the metadata, so " +
        "this is the most any Token-2022 build pays: the longest name, symbol and uri, with a " +
        "transfer fee. A build's costs are exact for its token. Absent when the rent can't be " +
        "read",
    ).optional(),
  }),
  update: z.object({
    usd: z.number().describe("fee per token update in USD (UPDATE_FEE_USD; 0: free)"),
    lamports: digits("fee per update in lamports at the current SOL price (0: no fee transfer)"),
  }).describe("the fee of POST /v1/tokens/{mint}/update"),
  limits: PricingLimits,
});

export const Me = z.object({
  keyId: z.string().describe("id of the calling key (lower-case hex)"),
  wallet: base58("wallet that bought the key"),
  usageToday: z.object({
    requests: z.number().int().describe("requests counted today (UTC)"),
    tokens: z.number().int().describe("token builds counted today (UTC)"),
    metadata: z.number().int().describe("metadata items counted today (UTC)"),
  }),
  limits: KeyLimits,
  conduct: z.object({
    recent: z.object({
      window: z.number().int().describe("how many of the purchase's latest landings are judged"),
      landings: z.number().int().describe("landings in the window (confirmed or unverified)"),
      unverified: z.number().int().describe("of those, landed unverified"),
      payers: z.number().int().describe("distinct payer wallets of the unverified ones"),
    }),
    byKeyWallet: z.number().int().describe(
      "unverified landings paid by the wallet that bought the key, all time",
    ),
    unverifiedLandings: z.array(z.object({
      mint: base58("the mint created"),
      signature: base58("the landed transaction"),
      payer: base58("the wallet that paid and signed it; it is refused further builds"),
      at: z.string().describe("when it was recorded (ISO 8601, UTC)"),
      byKeyWallet: z.boolean().describe("paid by the wallet that bought the key"),
    })).describe("the window's creations that landed without the full fee or altered"),
    policy: z.object({
      refusePayerAfter: z.number().int().describe(
        "a payer with this many unverified landings is refused builds on every key",
      ),
      suspendAfterByKeyWallet: z.number().int().describe(
        "the key is suspended when more of its own wallet's creations land unverified",
      ),
      suspendShare: z.number().describe(
        "the key is suspended when more than this share of the window landed unverified ...",
      ),
      suspendMinPayers: z.number().int().describe("... paid by at least this many wallets"),
    }),
  }).describe(
    "Creations that landed without the full fee (or altered): they are the payer's, who is " +
      "refused further builds; the key is suspended only for its own conduct (see policy)",
  ),
});

export const MetadataCreated = z.object({
  metadataUri: z.string().describe("https URL of the hosted metadata JSON (/m/<id>.json)"),
  imageUri: z.string().describe("https URL of the hosted image (/i/<image_id>.<extension>)"),
  id: z.string().regex(/^[0-9a-f]+$/).describe("id of the hosted metadata item (hex)"),
});

/** The schema POST /v1/tokens's answer is typed by. */

/** The relay's own request schema, the one POST /v1/transactions validates with. */

export const RelayAccepted = z.object({
  signature: z.string(),
  mint: base58("mint address"),
  status: z.literal("submitted"),
  updateId: z.string().optional().describe(
    "only for an update's transaction (POST /v1/tokens/{mint}/update): its outcome is recorded " +
      "on GET /v1/tokens/{mint}/updates/{updateId} without being asked",
  ),
});

export const Verification = z.object({
  signature: z.string(),
  status: z.enum(["pending", "confirmed", "failed", "unverified"]),
  mint: base58("mint address").nullable().describe(
    "null when the transaction is not one of this key's builds",
  ),
  supplyRaw: digits("full supply in base units"),
  decimals: z.number().int().nullable(),
  recipient: base58("recipient wallet").nullable(),
  feeVerified: z.boolean().describe("whether the service fee is present in the same transaction"),
  fee: z.object({
    amount: digits("fee amount in the currency's base unit"),
    currency: z.literal("SOL"),
  }),
});

/** The build record: the schema GET /v1/tokens/{mint} shapes its body through. */
