/**
 * The builds table's content, the same on whichever thread writes it (the full audit writes the
 * later builds on another one: tables-worker.ts): a build's row, the exceptions it raises and its
 * part of the totals. `BuildRows` writes all three; `CountedExceptions`, a part's exceptions.
 */
import type { AuditBuildDoc } from "./folds.ts";
import type { ChainCheck } from "./chain-check.ts";
import type { Row, TablePart } from "./sink.ts";
import { addBuild, addTotals, type Totals, zero } from "./totals.ts";
import { isoUtc } from "../kernel/time.ts";
import type { BuildsIndex, TableTotals } from "./table-splice.ts";

export type ExceptionKind =
  | "chain_broken"
  | "projection_mismatch"
  | "creation_unverified"
  | "short_fee_confirmed"
  | "outcome_without_build"
  | "build_history"
  | "build_for_unknown_key"
  | "chain_check";

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
      `${what} creation: ${b.problems.join("; ") || "no problems recorded"}`,
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
export class BuildTotals implements TableTotals {
  overall = zero();
  byKey = new Map<string, Totals>();
  byDay = new Map<string, Totals>();
  /** Each key's first build: unknown keys are listed in that order (table-splice.ts keeps it). */
  firstBuild = new Map<string, number>();
  orphans = 0;

  static of(t: TableTotals): BuildTotals {
    return Object.assign(new BuildTotals(), t);
  }

  /** Counts a build in (`sign` -1 takes it out). */
  count(b: AuditBuildDoc, sign: 1 | -1 = 1): void {
    if (!b.hasBuild) {
      this.orphans += sign;
      return;
    }
    addBuild(this.overall, b, sign);
    const k = b.keyId!;
    if (!this.byKey.has(k)) this.byKey.set(k, zero());
    addBuild(this.byKey.get(k)!, b, sign);
    if (!(this.firstBuild.get(k)! <= b.buildId)) this.firstBuild.set(k, b.buildId);
    const d = b.day!;
    if (!this.byDay.has(d)) this.byDay.set(d, zero());
    addBuild(this.byDay.get(d)!, b, sign);
  }

  /**
   * Adds totals counted over later builds (another thread's share): the result is what counting
   * those builds here, after these, gives, keys first seen there coming after the ones here.
   */
  add(later: TableTotals): void {
    addTotals(this.overall, later.overall);
    for (const [k, t] of later.byKey) {
      const mine = this.byKey.get(k);
      if (mine) addTotals(mine, t);
      else this.byKey.set(k, t);
    }
    for (const [d, t] of later.byDay) {
      const mine = this.byDay.get(d);
      if (mine) addTotals(mine, t);
      else this.byDay.set(d, t);
    }
    for (const [k, first] of later.firstBuild) {
      if (!(this.firstBuild.get(k)! <= first)) this.firstBuild.set(k, first);
    }
    this.orphans += later.orphans;
  }
}

/** Writes one exception row and counts it (`runAudit`'s `exception`, or `CountedExceptions`). */
export type Raise = (kind: ExceptionKind, detail: string, where: Partial<Row>) => Promise<void>;

/** Raises the exceptions build `b` raises, in order; how many (its row's flag in the index). */
export async function raiseBuildExceptions(
  b: AuditBuildDoc,
  check: ChainCheck | null,
  raise: Raise,
): Promise<number> {
  const raised = buildExceptions(b, check);
  for (const [kind, detail, where] of raised) await raise(kind, detail, where);
  return raised.length;
}

/**
 * Where builds rows go: the audit's builds table, or a part of it (sink.ts `TablePart`). `next`
 * tells where the next row starts in the CSV and the JSON file (null: the sink cannot tell).
 */
export interface RowsOut {
  next(): { csv: number; json: number } | null;
  write(row: Row): Promise<void>;
}

/**
 * Writes builds in build order, each the same way on every thread: its row, its part of
 * `totals`, the exceptions it raises, and where its row starts (`index`, which is let go for good
 * when a row cannot be placed: no offsets, or a build id that is not a finite number).
 */
export class BuildRows {
  constructor(
    readonly rows: RowsOut,
    readonly totals: BuildTotals,
    public index: BuildsIndex | null,
  ) {}

  async write(b: AuditBuildDoc, check: ChainCheck | null, raise: Raise): Promise<void> {
    const at = this.index ? this.rows.next() : null;
    if (this.index && (!at || typeof b.buildId !== "number" || !Number.isFinite(b.buildId))) {
      this.index = null;
    }
    await this.rows.write(buildRow(b, check));
    this.totals.count(b);
    const raised = await raiseBuildExceptions(b, check, raise);
    this.index?.add(b.buildId, at!.csv, at!.json, raised > 0);
  }
}

/**
 * Exceptions written to a part of the exceptions table and counted there by kind: the summary
 * lists kinds in the order they first come, so the part's are added when the part is appended.
 */
export class CountedExceptions {
  readonly byKind: Partial<Record<ExceptionKind, number>> = {};
  count = 0;

  constructor(readonly part: TablePart) {}

  readonly raise: Raise = async (kind, detail, where) => {
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
    this.count++;
    await this.part.write(exceptionRow(kind, detail, where));
  };
}
