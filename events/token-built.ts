/**
 * The build's data, defined once: `TokenBuilt.data` is this schema's type, the build record
 * (projections/builds.ts) keeps the fields `KEPT` names, and the record served by
 * GET /v1/tokens/{mint} and GET /v1/tokens (src/tokens/build-record.ts) and its OpenAPI schema
 * are picked from it by `SERVED`, descriptions included. A field added here and to `SERVED` is
 * recorded, kept, served and documented; see docs/architecture.md.
 */
import { z } from "zod";
import { base58, digits } from "../src/kernel/described.ts";

/** An authority handed over in the creating transaction: optional, described on the optional. */
const handedTo = (authority: string) =>
  base58(authority).optional().describe(
    `address the ${authority} was handed to in the creating transaction (base58); absent: the payer`,
  );

export const TokenBuiltData = z.object({
  buildId: z.number().int(),
  keyId: z.string(),
  purchaseId: z.string(),
  /** The UTC day the build counts against (YYYY-MM-DD). */
  day: z.string(),
  mint: base58("mint address"),
  seed: z.string(),
  reference: base58("read-only reference key of the fee transfer"),
  payer: base58("payer"),
  recipient: base58("owner of the whole supply"),
  recipientTokenAccount: base58("recipient's token account"),
  metadataAccount: base58("metadata account (Token-2022: the mint)"),
  name: z.string(),
  symbol: z.string(),
  uri: z.string(),
  decimals: z.number().int(),
  supplyRaw: digits("the whole supply in base units"),
  revokeMint: z.boolean(),
  revokeFreeze: z.boolean(),
  immutableMetadata: z.boolean(),
  feeLamports: digits("our fee"),
  feeUsd: z.number(),
  solUsd: z.number(),
  treasury: base58("treasury"),
  /** The message's recent blockhash: the latest blockhash, or a durable nonce's stored nonce. */
  blockhash: z.string(),
  /** Null: a durable nonce build, which holds until its nonce moves on (`nonceAccount`). */
  lastValidBlockHeight: z.number().int().nullable(),
  /** SHA-256 (hex) of the exact message bytes the payer is asked to sign. */
  messageHash: z.string(),
  /** Absent: the classic SPL Token program (events from before carry none). */
  tokenProgram: z.literal("token-2022").optional().describe(
    "present for a Token-2022 mint; absent: the classic SPL Token program",
  ),
  /** Token-2022 TransferFeeConfig; authority null: the fee is permanent. */
  transferFee: z.object({
    basisPoints: z.number().int(),
    maximum: digits("largest fee of one transfer in base units"),
    authority: base58("transfer-fee and withdraw authority (the payer unless handed over)")
      .nullable().describe(
        "null: the fee is permanent",
      ),
  }).optional().describe("the Token-2022 transfer fee, when the mint has one"),
  /** Authorities handed to another address in the creating transaction (absent: the payer's). */
  mintAuthority: handedTo("mint authority"),
  freezeAuthority: handedTo("freeze authority"),
  updateAuthority: handedTo("metadata update authority"),
  /** The durable nonce account the message advances first; `blockhash` is its nonce then. */
  nonceAccount: base58("durable nonce account").optional().describe(
    "the durable nonce account the transaction advances first; absent: a recent blockhash",
  ),
  /** The vanity pattern the seed was ground for, and how many seeds were tried. */
  vanity: z.object({
    prefix: z.string(),
    suffix: z.string(),
    ignoreCase: z.boolean(),
    tries: z.number().int(),
  }).optional(),
});
export type TokenBuiltData = z.infer<typeof TokenBuiltData>;

type Field = keyof TokenBuiltData;

/**
 * What the served record shows of the build, around its lifecycle fields: these first, then the
 * lifecycle (status, signature, …), then `tail`. An optional field the record should serve goes
 * into `tail`.
 */
export const SERVED = {
  head: ["mint", "name", "symbol"],
  tail: [
    "tokenProgram",
    "transferFee",
    "mintAuthority",
    "freezeAuthority",
    "updateAuthority",
    "nonceAccount",
  ],
} as const satisfies { head: readonly Field[]; tail: readonly Field[] };

/** What the build record keeps of the event, in its order: what the lifecycle needs, and `SERVED`. */
export const KEPT = [
  "buildId",
  "keyId",
  "purchaseId",
  ...SERVED.head,
  "uri",
  "payer",
  "recipient",
  "recipientTokenAccount",
  "metadataAccount",
  "reference",
  "decimals",
  "supplyRaw",
  "feeLamports",
  "treasury",
  "blockhash",
  "lastValidBlockHeight",
  "messageHash",
  ...SERVED.tail,
] as const satisfies readonly Field[];

export type KeptField = typeof KEPT[number];

/** The kept fields of `data`, in `KEPT`'s order; an absent optional field stays absent. */
export function keptOf(data: TokenBuiltData): Pick<TokenBuiltData, KeptField> {
  const out: Record<string, unknown> = {};
  for (const k of KEPT) if (data[k] !== undefined) out[k] = data[k];
  return out as Pick<TokenBuiltData, KeptField>;
}
