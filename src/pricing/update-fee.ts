/**
 * The fee of a token update, in one place: its variable (`fees.updateUsd`, UPDATE_FEE_USD,
 * default 0), its formula (that many USD in lamports at the SOL price, rounded up, as the token
 * fee), what GET /v1/pricing publishes of it and the API reference's words. 0: an update carries
 * no fee transfer at all (and no reference key).
 */
import type { Config } from "../config.ts";
import { usdToLamports } from "./price-source.ts";

export type UpdateFeeConfig = Pick<Config["fees"], "updateUsd">;

/** What an update transfers to the treasury at a SOL price of `solUsd` (0: no transfer). */
export function updateFeeLamports(fees: UpdateFeeConfig, solUsd: number): bigint {
  return fees.updateUsd > 0 ? usdToLamports(fees.updateUsd, solUsd) : 0n;
}

/** Whether an update is charged at all: only then is a price needed and a transfer built. */
export const updateCharged = (fees: UpdateFeeConfig) => fees.updateUsd > 0;

/** The fee as GET /v1/pricing shows it (`update.usd`, `update.lamports`). */
export function publishedUpdateFee(fees: UpdateFeeConfig, solUsd: number) {
  return { usd: fees.updateUsd, lamports: updateFeeLamports(fees, solUsd).toString() };
}

export const updateFeeText = {
  inUpdate: (fees: UpdateFeeConfig) =>
    fees.updateUsd > 0
      ? `our fee, ${fees.updateUsd} USD at the current SOL price (a transfer to the treasury with a read-only reference key)`
      : "no fee: updates are free (UPDATE_FEE_USD is 0)",
};
