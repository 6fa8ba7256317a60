/**
 * What POST /v1/tokens answers, as the one zod schema the handler's answer is typed by
 * (`BuildResponse`) and the OpenAPI document is generated from (src/openapi/), so a field of the
 * answer is declared and documented in one place.
 */
import { z } from "zod";
import { base58, digits } from "../kernel/described.ts";

export const TokenBuilt = z.object({
  buildId: z.number().int(),
  mint: base58("address of the new mint"),
  metadataAccount: base58(
    "address of the metadata account (Token-2022: the mint itself, which holds the metadata)",
  ),
  recipientTokenAccount: base58("address of the recipient's token account"),
  transaction: z.string().describe("base64 unsigned legacy transaction"),
  transactionEncoding: z.literal("base64"),
  format: z.literal("legacy-unsigned"),
  requiredSigner: base58("the payer, the only required signer"),
  recentBlockhash: z.string().describe(
    "the message's recent blockhash: the latest blockhash, or on a durable nonce the nonce " +
      "account's stored nonce",
  ),
  lastValidBlockHeight: z.number().int().nullable().describe(
    "the last block height at which the transaction can land; null on a durable nonce, which " +
      "does not expire by block height",
  ),
  expiresInSeconds: z.number().int().nullable().describe(
    "validity window in seconds (about 60); null on a durable nonce: the transaction stays " +
      "valid until the nonce account's nonce moves on (this transaction moves it)",
  ),
  fee: z.object({
    usd: z.number(),
    lamports: digits("fee in lamports"),
    treasury: base58("address receiving the fee"),
  }),
  costs: z.object({
    networkFeeLamports: digits("base fee of the one signature"),
    priorityFeeLamports: digits("priority fee: the compute-unit limit times the unit price set"),
    mintRentLamports: digits("rent-exempt minimum of the mint account"),
    tokenAccountRentLamports: digits(
      "rent the payer adds to the recipient's token account (0 when its address already holds it)",
    ),
    metadataRentLamports: digits("rent-exempt minimum of the metadata account (607 bytes)"),
    metadataProtocolFeeLamports: digits(
      "the Token Metadata program's creation fee, kept in the metadata account",
    ),
    serviceFeeLamports: digits("our fee (fee.lamports)"),
    totalLamports: digits(
      "the sum: exactly what leaves the payer's balance if the transaction lands",
    ),
  }).describe(
    "Every lamport the payer spends if the transaction lands, from the cluster's rent and fee " +
      "rules. The payer needs totalLamports exactly, or at least totalLamports plus the " +
      "rent-exempt minimum of a wallet (it may not be left between 0 and that); insufficient_funds " +
      "carries the same costs, needed, available and shortfall. Token-2022: mintRentLamports " +
      "is the rent of the mint at its final size (extensions and in-mint metadata included), " +
      "tokenAccountRentLamports that of a token account with the extensions the mint requires " +
      "(170 bytes, 182 with a transfer fee), and both metadata parts are 0.",
  ),
  tokenProgram: z.literal("token-2022").optional().describe(
    "present for a Token-2022 mint; absent: the classic SPL Token program",
  ),
  vanity: z.object({
    tries: z.number().int().describe("seeds tried until the mint address matched"),
  }).optional().describe("present when a vanity address was asked for"),
  nonceAccount: base58("the durable nonce account the transaction advances first").optional()
    .describe(
      "present when the build uses a durable nonce (nonceAccount in the request): the " +
        "transaction begins with AdvanceNonceAccount and does not expire",
    ),
});

export type BuildResponse = z.infer<typeof TokenBuilt>;

/** What POST /v1/tokens/{mint}/refresh answers: the build re-issued, and how its fee was set. */
export const TokenRefreshed = TokenBuilt.extend({
  feeQuote: z.enum(["quoted", "repriced"]).describe(
    "quoted: the fee of the build's quote, which still held; repriced: the quote had run out, " +
      "so the fee is converted at the current SOL price",
  ),
  refreshes: z.number().int().describe(
    "how many times the build has been re-issued, this one included",
  ),
});

export type RefreshResponse = z.infer<typeof TokenRefreshed>;
