/** The builds table's content: a build's row, the exceptions it raises and its part of the totals. */
import type { AuditBuildDoc } from "./folds.ts";
import type { ChainCheck } from "./chain-check.ts";
import type { Row } from "./sink.ts";
import { addBuild, type Totals, zero } from "./totals.ts";
import { isoUtc } from "../kernel/time.ts";

export type ExceptionKind =
  | "chain_broken"
  | "projection_mismatch"
  | "creation_unverified"
  | "short_fee_confirmed"
  | "outcome_without_build"
  | "build_history"
  | "build_for_unknown_key"
  | "chain_check"
  | "short_fee_update";

/** An exceptions table row, its columns in the order every exception is written with. */
export const exceptionRow = (kind: ExceptionKind, detail: string, at: Partial<Row> = {}): Row =>
  ({
    kind,
    position: null,
    buildId: null,
    keyId: null,
    mint: null,
    signature: null,
    ...at,
    detail,
  }) as Row;

export const iso = (ms: number | null) => (ms === null ? null : isoUtc(ms));

export const buildRow = (b: AuditBuildDoc, check: ChainCheck | null): Row => ({
  buildId: b.buildId,
  day: b.day,
  builtAt: iso(b.builtAt),
  keyId: b.keyId,
  purchaseId: b.purchaseId,
  mint: b.mint,
  name: b.name,
  symbol: b.symbol,
  payer: b.payer,
  status: b.status,
  signature: b.signature,
  quotedLamports: b.quotedLamports,
  feeSeenLamports: b.feeSeenLamports,
  chainFeeLamports: check?.chainFeeLamports ?? null,
  feeUsd: b.feeUsd,
  solUsd: b.solUsd,
  outcomeAt: iso(b.outcomeAt),
  problems: b.problems.join("; ") || null,
});

/** The exceptions a build raises, in the order they are written. */
export function buildExceptions(
  b: AuditBuildDoc,
  check: ChainCheck | null,
): [ExceptionKind, string, Partial<Row>][] {
  const out: [ExceptionKind, string, Partial<Row>][] = [];
  const where = { buildId: b.buildId, keyId: b.keyId, mint: b.mint, signature: b.signature };
  if (!b.hasBuild) {
    out.push([
      "outcome_without_build",
      `${b.status} for build ${b.buildId}, which no TokenBuilt created`,
      where,
    ]);
  }
  if (b.status === "unverified") {
    const what = unverifiedLabel(BigInt(b.feeSeenLamports ?? "0"), b.quotedLamports);
    out.push([
      "creation_unverified",
      // The payer, whom the service refuses further builds: an end user, unless it is the key's.
      `${what} creation paid by ${b.payer ?? "an unknown payer"}: ${
        b.problems.join("; ") || "no problems recorded"
      }`,
      where,
    ]);
  }
  if (
    b.status === "confirmed" && b.quotedLamports !== null &&
    BigInt(b.feeSeenLamports ?? "0") < BigInt(b.quotedLamports)
  ) {
    out.push([
      "short_fee_confirmed",
      `confirmed with ${b.feeSeenLamports} lamports seen, quoted ${b.quotedLamports}`,
      where,
    ]);
  }
  for (const a of b.anomalies) out.push(["build_history", a, where]);
  for (const p of check?.problems ?? []) out.push(["chain_check", p, where]);
  return out;
}

/** What an unverified creation got wrong about the fee; "fee-paid" when only mint or supply did. */
export function unverifiedLabel(seen: bigint, quoted: string | null): string {
  if (seen === 0n) return "fee-less";
  if (quoted !== null && seen >= BigInt(quoted)) return "fee-paid";
  return `short-fee (${seen} of ${quoted ?? "?"} lamports)`;
}

/** The totals over the builds counted so far: overall, per key, per day, and orphan outcomes. */
export class BuildTotals {
  overall = zero();
  byKey = new Map<string, Totals>();
  byDay = new Map<string, Totals>();
  orphans = 0;

  /** Counts a build in. */
  count(b: AuditBuildDoc): void {
    if (!b.hasBuild) {
      this.orphans++;
      return;
    }
    addBuild(this.overall, b);
    const k = b.keyId!;
    if (!this.byKey.has(k)) this.byKey.set(k, zero());
    addBuild(this.byKey.get(k)!, b);
    const d = b.day!;
    if (!this.byDay.has(d)) this.byDay.set(d, zero());
    addBuild(this.byDay.get(d)!, b);
  }
}

/** Writes one exception row and counts it (`runAudit`'s `raise`). */
export type Raise = (kind: ExceptionKind, detail: string, where: Partial<Row>) => Promise<void>;
