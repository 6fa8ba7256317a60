/**
 * The per-token fee, in one place: its variable (`fees.tokenUsd`, TOKEN_FEE_USD), its formula
 * (that many USD in lamports at the SOL price a build holds, rounded up), what GET /v1/pricing
 * publishes of it, and the words the API reference says about it. A changed formula is a change
 * here and in its test.
 */
import type { Config } from "../config.ts";
import { usdToLamports } from "./price-source.ts";

export type TokenFeeConfig = Pick<Config["fees"], "tokenUsd">;

/** What each build transfers to the treasury at a SOL price of `solUsd`. */
export function tokenFeeLamports(fees: TokenFeeConfig, solUsd: number): bigint {
  return usdToLamports(fees.tokenUsd, solUsd);
}

/** The fee as GET /v1/pricing shows it (`token.usd`, `token.lamports`, `token.solUsd`). */
export function publishedTokenFee(fees: TokenFeeConfig, solUsd: number) {
  return {
    usd: fees.tokenUsd,
    lamports: tokenFeeLamports(fees, solUsd).toString(),
    solUsd,
  };
}

/** The fee in the API reference's words. */
export const tokenFeeText = {
  /** "… USD per token built …", for the overview's fees-and-limits sentence. */
  perToken: (fees: TokenFeeConfig) =>
    `${fees.tokenUsd} USD per token built (paid in SOL inside the transaction)`,
  /** How the lamports follow from the price, for GET /v1/pricing. */
  formula: (fees: TokenFeeConfig) =>
    `The per-token fee (${fees.tokenUsd} USD) in lamports follows the current SOL price.`,
  /** What a build charges, for POST /v1/tokens. */
  inBuild: (fees: TokenFeeConfig) => `our fee, ${fees.tokenUsd} USD at the current SOL price`,
};
