/**
 * What a build costs the payer and how the compute budget is sized. Pure: the numbers come from
 * the RPC answers the command already holds.
 */
import type { RentTable } from "./rent.ts";
import { MAX_COMPUTE_UNIT_LIMIT } from "./transaction.ts";

/** Base fee per signature; a build has exactly one. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

/**
 * Headroom over the simulated units. The final message differs from the simulated one only in
 * the two compute-budget values, so consumption barely moves; the margin covers what can still
 * change before landing (account state read by the programs, runtime cost updates).
 */
export const CU_MARGIN_RATIO = 1.15;
export const CU_MARGIN_FIXED = 5_000;
/** When an RPC does not report unitsConsumed: comfortably above what these instructions use. */
export const CU_FALLBACK = 300_000;
/**
 * The least limit set. The Token Metadata program's compute use depends on the mint (each PDA bump
 * it tries costs 1,500 CU: 34.7k-52.8k over 300 random mints, docs/chain.md), and the mint is new
 * with every build; the rest of the transaction uses about 20k. 100,000 covers the program's
 * worst case seen with a margin of some 25k (about 17 more bumps tried, odds below 1 in 100,000),
 * so the limit, and with it the priority fee, is the same whatever mint a build draws: what
 * insufficient_funds names is what the next build (another mint) needs.
 */
export const CU_FLOOR = 100_000;

export function unitLimitFromSimulation(unitsConsumed: number | null | undefined): number {
  if (!unitsConsumed || unitsConsumed <= 0) return CU_FALLBACK;
  return Math.min(
    MAX_COMPUTE_UNIT_LIMIT,
    Math.max(CU_FLOOR, Math.ceil(unitsConsumed * CU_MARGIN_RATIO) + CU_MARGIN_FIXED),
  );
}

/**
 * Price per compute unit: the 75th percentile of what recently landed while touching the
 * accounts this transaction writes, capped by configuration so a fee spike can't make a build
 * absurdly expensive. The 75th percentile lands in most slots without paying for the peaks.
 */
export const PRIORITY_PERCENTILE = 0.75;

export function priorityPrice(
  recent: readonly { prioritizationFee: number }[],
  capMicroLamports: number,
): bigint {
  if (recent.length === 0) return 0n;
  const sorted = recent.map((r) => r.prioritizationFee).sort((a, b) => a - b);
  const idx = Math.max(0, Math.ceil(PRIORITY_PERCENTILE * sorted.length) - 1);
  const p = BigInt(Math.max(0, Math.floor(sorted[idx])));
  const cap = BigInt(Math.floor(capMicroLamports));
  return p > cap ? cap : p;
}

/** ceil(units * microLamports / 1e6): how the runtime charges the priority fee. */
export function priorityFeeLamports(unitLimit: number, microLamportsPerUnit: bigint): bigint {
  return (BigInt(unitLimit) * microLamportsPerUnit + 999_999n) / 1_000_000n;
}

export interface CostBreakdown {
  serviceFee: bigint;
  mintRent: bigint;
  tokenAccountRent: bigint;
  metadataRent: bigint;
  metadataProgramFee: bigint;
  networkFee: bigint;
  priorityFee: bigint;
  /**
   * The runtime refuses a transaction that leaves the fee payer above zero but below the
   * rent-exempt minimum, so a payer that keeps anything must keep at least this.
   */
  payerReserve: bigint;
}

export function costBreakdown(
  serviceFee: bigint,
  rent: RentTable,
  priorityFee: bigint,
  /** Lamports already held at the recipient's token-account address (0 when none). */
  tokenAccountLamports = 0n,
): CostBreakdown {
  return {
    serviceFee,
    // In full whatever the mint's address holds: the build transfers exactly this (mint-account.ts).
    mintRent: rent.mint,
    // The ATA program tops the address up to its rent only (it transfers `rent - balance`), so
    // lamports someone already sent there lower what the payer spends, to 0 when it holds enough.
    tokenAccountRent: rent.tokenAccount > tokenAccountLamports
      ? rent.tokenAccount - tokenAccountLamports
      : 0n,
    metadataRent: rent.metadata,
    metadataProgramFee: rent.metadataProtocolFee,
    networkFee: LAMPORTS_PER_SIGNATURE,
    priorityFee,
    payerReserve: rent.wallet,
  };
}

/** What leaves the payer's account when the transaction lands. */
export const spend = (c: CostBreakdown) =>
  c.serviceFee + c.mintRent + c.tokenAccountRent + c.metadataRent + c.metadataProgramFee +
  c.networkFee + c.priorityFee;

/** The balance the payer needs: the spend, plus the reserve unless it spends down to zero. */
export function shortfall(balance: bigint, c: CostBreakdown): { needed: bigint } | null {
  const out = spend(c);
  if (balance === out) return null;
  const needed = out + c.payerReserve;
  return balance >= needed ? null : { needed };
}

export const breakdownStrings = (c: CostBreakdown): Record<string, string> =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v.toString()]));

/**
 * The `costs` of a build's 201 (and of insufficient_funds): every lamport the payer spends if the
 * transaction lands, as decimal strings, and their sum. `totalLamports` is exactly the drop of
 * the payer's balance.
 */
export interface CostsView {
  networkFeeLamports: string;
  priorityFeeLamports: string;
  mintRentLamports: string;
  tokenAccountRentLamports: string;
  metadataRentLamports: string;
  metadataProtocolFeeLamports: string;
  serviceFeeLamports: string;
  totalLamports: string;
}

export function costsView(c: CostBreakdown): CostsView {
  return {
    networkFeeLamports: c.networkFee.toString(),
    priorityFeeLamports: c.priorityFee.toString(),
    mintRentLamports: c.mintRent.toString(),
    tokenAccountRentLamports: c.tokenAccountRent.toString(),
    metadataRentLamports: c.metadataRent.toString(),
    metadataProtocolFeeLamports: c.metadataProgramFee.toString(),
    serviceFeeLamports: c.serviceFee.toString(),
    totalLamports: spend(c).toString(),
  };
}
