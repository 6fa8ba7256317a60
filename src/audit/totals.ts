/**
 * The reconciliation's totals (per key, per UTC day, overall): sums over the builds table's rows.
 * They are exact integers (lamports as bigints, USD in cents), so an incremental audit can take a
 * changed build's old row out and put its new one in (table-splice.ts) and get what a full pass
 * over every build adds up to.
 */
import type { AuditBuildDoc } from "./folds.ts";

export interface Totals {
  builds: number;
  open: number;
  confirmed: number;
  unverified: number;
  failed: number;
  expired: number;
  landedQuotedLamports: bigint;
  collectedLamports: bigint;
  shortfallLamports: bigint;
  confirmedFeeCents: number;
}

export const zero = (): Totals => ({
  builds: 0,
  open: 0,
  confirmed: 0,
  unverified: 0,
  failed: 0,
  expired: 0,
  landedQuotedLamports: 0n,
  collectedLamports: 0n,
  shortfallLamports: 0n,
  confirmedFeeCents: 0,
});

/** Adds a build's row to `t` (`sign` -1 takes it out again). */
export function addBuild(t: Totals, b: AuditBuildDoc, sign: 1 | -1 = 1): void {
  const big = BigInt(sign);
  t.builds += sign;
  if (b.status === "built" || b.status === "submitted") t.open += sign;
  else t[b.status] += sign;
  if (b.status === "confirmed" || b.status === "unverified") {
    const quoted = BigInt(b.quotedLamports ?? "0");
    const seen = BigInt(b.feeSeenLamports ?? "0");
    t.landedQuotedLamports += big * quoted;
    t.collectedLamports += big * seen;
    if (seen < quoted) t.shortfallLamports += big * (quoted - seen);
  }
  if (b.status === "confirmed") t.confirmedFeeCents += sign * Math.round((b.feeUsd ?? 0) * 100);
}

/** Adds `more` into `t`. */
export function addTotals(t: Totals, more: Totals): void {
  t.builds += more.builds;
  t.open += more.open;
  t.confirmed += more.confirmed;
  t.unverified += more.unverified;
  t.failed += more.failed;
  t.expired += more.expired;
  t.landedQuotedLamports += more.landedQuotedLamports;
  t.collectedLamports += more.collectedLamports;
  t.shortfallLamports += more.shortfallLamports;
  t.confirmedFeeCents += more.confirmedFeeCents;
}

/** Totals as JSON (bigints as decimal strings), and back. */
export type TotalsJson = Record<keyof Totals, number | string>;

export const totalsToJson = (t: Totals): TotalsJson => ({
  ...t,
  landedQuotedLamports: t.landedQuotedLamports.toString(),
  collectedLamports: t.collectedLamports.toString(),
  shortfallLamports: t.shortfallLamports.toString(),
});

export const totalsFromJson = (j: TotalsJson): Totals => ({
  builds: Number(j.builds),
  open: Number(j.open),
  confirmed: Number(j.confirmed),
  unverified: Number(j.unverified),
  failed: Number(j.failed),
  expired: Number(j.expired),
  landedQuotedLamports: BigInt(j.landedQuotedLamports),
  collectedLamports: BigInt(j.collectedLamports),
  shortfallLamports: BigInt(j.shortfallLamports),
  confirmedFeeCents: Number(j.confirmedFeeCents),
});
