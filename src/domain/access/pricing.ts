/**
 * What a landed access payment is worth. A payment landed (by block time) while the quote in force
 * was valid counts at that quote's amount, even if the price moved since; one landed later is
 * priced at the current price. What is still owed is kept in base units together with the SOL
 * price it is expressed at, so payments made at different prices add up exactly: together they
 * buy access once they cover the fee.
 */
import type { OpenQuote } from "../../../projections/purchases.ts";
import { usdToLamports } from "../../pricing/price-source.ts";

export type Currency = "SOL" | "STABLECOIN";

/** An amount in base units at a SOL price (null: a stablecoin, whose price does not move). */
export interface Owed {
  amount: bigint;
  solUsd: number | null;
}

/** The fee in the currency's base units, rounded up. */
export function feeUnits(
  usd: number,
  currency: Currency,
  price: { solUsd: number | null; decimals: number },
): bigint {
  if (currency === "STABLECOIN") return stablecoinUnits(usd, price.decimals);
  if (price.solUsd === null) throw new Error("a SOL amount needs a SOL price");
  return usdToLamports(usd, price.solUsd);
}

/**
 * A USD amount in a stablecoin's base units, rounded up as the SOL amount is (the treasury never
 * receives less than the fee), in exact micro-dollars like `usdToLamports`.
 */
export function stablecoinUnits(usd: number, decimals: number): bigint {
  const micro = BigInt(Math.round(usd * 1_000_000));
  const scale = 10n ** BigInt(decimals);
  return (micro * scale + 999_999n) / 1_000_000n;
}

/** The same value at another SOL price, rounded up (in nano-dollars, like `usdToLamports`). */
export function atPrice(owed: Owed, solUsd: number | null): bigint {
  if (owed.solUsd === null || solUsd === null || owed.solUsd === solUsd) return owed.amount;
  const from = BigInt(Math.round(owed.solUsd * 1_000_000_000));
  const to = BigInt(Math.round(solUsd * 1_000_000_000));
  return (owed.amount * from + to - 1n) / to;
}

/** Landed after the quote expired (or with no block time to tell): priced at today's price. */
export const isLate = (quote: OpenQuote, blockTime: number | null): boolean =>
  blockTime === null || blockTime * 1000 > quote.expiresAt;

export interface PricedPayment {
  late: boolean;
  /** The SOL price the payment was priced at (the quote's, or today's when late). */
  solUsd: number | null;
  /** Still owed in base units at `solUsd`; 0 when the fee is paid. */
  shortfall: bigint;
}

/**
 * `owed`: what the purchase still owes; `feeUsd` and `nothingPaid` let a late first payment be
 * priced from the fee itself (no rounding carried over). `currentSolUsd`: the price now, needed
 * for a late SOL payment only.
 */
export function pricePayment(input: {
  currency: Currency;
  quote: OpenQuote;
  owed: Owed;
  feeUsd: number;
  nothingPaid: boolean;
  received: bigint;
  blockTime: number | null;
  currentSolUsd: number | null;
  decimals: number;
}): PricedPayment {
  const late = isLate(input.quote, input.blockTime);
  const solUsd = input.currency === "STABLECOIN"
    ? null
    : late
    ? input.currentSolUsd
    : input.quote.solUsd;
  if (input.currency === "SOL" && solUsd === null) throw new Error("a SOL payment needs a price");
  const due = late && input.nothingPaid
    ? feeUnits(input.feeUsd, input.currency, { solUsd, decimals: input.decimals })
    : atPrice(input.owed, solUsd);
  return { late, solUsd, shortfall: input.received >= due ? 0n : due - input.received };
}
