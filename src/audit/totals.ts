/**
 * The reconciliation's totals (per key, per UTC day, overall): sums over the builds table's rows.
 * They are exact integers (lamports as bigints, USD in cents).
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

/** Adds a build's row to `t`. */
export function addBuild(t: Totals, b: AuditBuildDoc): void {
  t.builds++;
  if (b.status === "built" || b.status === "submitted") t.open++;
  else t[b.status]++;
  if (b.status === "confirmed" || b.status === "unverified") {
    const quoted = BigInt(b.quotedLamports ?? "0");
    const seen = BigInt(b.feeSeenLamports ?? "0");
    t.landedQuotedLamports += quoted;
    t.collectedLamports += seen;
    if (seen < quoted) t.shortfallLamports += quoted - seen;
  }
  if (b.status === "confirmed") t.confirmedFeeCents += Math.round((b.feeUsd ?? 0) * 100);
}
