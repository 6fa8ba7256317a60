/** What a key's owner sees of one of its builds: the fields both token endpoints answer. */
import type { BuildDoc } from "../../projections/builds.ts";

export interface TokenSummary {
  mint: string;
  name: string;
  symbol: string;
  status: BuildDoc["status"];
  signature: string | null;
  feeVerified: boolean;
  createdAt: number;
  confirmedAt: number | null;
}

export const tokenSummary = (b: BuildDoc): TokenSummary => ({
  mint: b.mint,
  name: b.name,
  symbol: b.symbol,
  status: b.status,
  signature: b.signature,
  feeVerified: b.feeVerified,
  createdAt: b.createdAt,
  confirmedAt: b.confirmedAt,
});
