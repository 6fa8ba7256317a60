/**
 * The auditor. It reads the event log and the live projections through Deno KV's public API only
 * (`list`, `get`, `getMany` and the entries' versionstamps), so the same code audits a local KV
 * file, a remote KV (a KV Connect URL) and an imported NDJSON export. In order:
 *
 * 1. the replay (replay.ts; incremental.ts from a checkpoint): the hash chain checked, every
 *    projection rebuilt from the log alone and compared with the live one, exact on a running
 *    service (live.ts);
 * 2. the reconciliation tables, from the audit's own folds kept in its state (tables.ts), through
 *    an `AuditSink`;
 * 3. the summary, and a checkpoint when the log and the projections held.
 *
 * The audited KV is only read.
 */
import { canonicalJson } from "../../events/hash.ts";
import type { LogHead } from "../../events/keys.ts";
import type { TxReader } from "./chain-check.ts";
import { type ExceptionKind, exceptionRow } from "./build-table.ts";
import { replayFrom } from "./incremental.ts";
import type { AuditProgress } from "./progress.ts";
import { replayFull } from "./replay.ts";
import type { AuditSink, Row } from "./sink.ts";
import { type Checkpoint, CHECKPOINT_VERSION } from "./state.ts";
import { writeTables } from "./tables.ts";
import { UPDATE_COLUMNS, type UpdatesSummary } from "./update-table.ts";
import { type PurchasesSummary, totalsRow } from "./totals-tables.ts";

const TOTAL_COLUMNS = [
  "builds",
  "open",
  "confirmed",
  "unverified",
  "failed",
  "expired",
  "landedQuotedLamports",
  "collectedLamports",
  "shortfallLamports",
  "confirmedFeeUsd",
];

/** Every table the audit writes, with its CSV columns in order. */
export const AUDIT_TABLES: Record<string, string[]> = {
  builds: [
    "buildId",
    "day",
    "builtAt",
    "keyId",
    "purchaseId",
    "mint",
    "name",
    "symbol",
    "payer",
    "status",
    "signature",
    "quotedLamports",
    "feeSeenLamports",
    "chainFeeLamports",
    "feeUsd",
    "solUsd",
    "outcomeAt",
    "problems",
  ],
  totals_by_key: [
    "keyId",
    "purchaseId",
    "wallet",
    "keyStatus",
    "unverifiedCount",
    ...TOTAL_COLUMNS,
  ],
  totals_by_day: ["day", ...TOTAL_COLUMNS],
  purchases: [
    "purchaseId",
    "wallet",
    "status",
    "currency",
    "amount",
    "usd",
    "signature",
    "quotedAt",
    "paidAt",
    "activeKeyId",
    "keyIds",
  ],
  updates: UPDATE_COLUMNS,
  exceptions: ["kind", "position", "buildId", "keyId", "mint", "signature", "detail"],
};

export interface AuditOptions {
  /** The KV under audit; only read. */
  kv: Deno.Kv;
  /**
   * The audit's state: a KV of its own (a file in the audit's directory, or ":memory:"), empty
   * for a full audit, the checkpoint's state for an incremental one.
   */
  scratch: Deno.Kv;
  sink: AuditSink;
  /** Audit only what came after this checkpoint (`scratch` then holds its state). */
  from?: Checkpoint | null;
  /** Set for --verify-chain: re-reads every landed creation from the chain. */
  readTx?: TxReader | null;
  /** Creations read from the chain at a time (default 4). */
  chainConcurrency?: number;
  now?: () => number;
  onProgress?: (p: AuditProgress) => void;
  /** Events between two "events" progress lines (default 100,000). */
  progressEvery?: number;
  /** Tests: called after each pass of the replay, to change the KV between them. */
  onPass?: (pass: "touches" | "live" | "fold") => void | Promise<void>;
}

export interface AuditSummary {
  auditedAt: string;
  ok: boolean;
  head: LogHead | null;
  events: number;
  chain: { ok: boolean; problems: number };
  /** The checkpoint an incremental audit started from. */
  from: { position: number; hash: string } | null;
  /** Where the next incremental audit can start (written when the log and projections held). */
  checkpoint: Checkpoint | null;
  projections: {
    documents: number;
    mismatches: number;
    /** "digest": all compared by digest; "documents": one by one; "incremental": touched only. */
    compared: "digest" | "documents" | "incremental";
    /** Documents the service changed while the audit ran, each settled against the log. */
    movedDuringAudit: number;
  };
  builds: Row;
  orphanOutcomes: number;
  keys: number;
  purchases: PurchasesSummary;
  /** Token updates: how many, landed, failed, and their fees quoted and collected. */
  updates: UpdatesSummary;
  verifiedOnChain: number | null;
  exceptions: { total: number; byKind: Partial<Record<ExceptionKind, number>> };
}

export async function runAudit(opts: AuditOptions): Promise<AuditSummary> {
  const { kv, scratch, sink } = opts;
  const now = opts.now ?? Date.now;
  const from = opts.from ?? null;
  /** Exceptions by kind, in the order each kind first came; the summary lists them so. */
  const byKind: Partial<Record<ExceptionKind, number>> = {};
  let total = 0;
  const raise = async (kind: ExceptionKind, detail: string, at: Partial<Row> = {}) => {
    total++;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    await sink.write("exceptions", exceptionRow(kind, detail, at));
  };

  const t0 = performance.now();
  const replayOpts = {
    kv,
    state: scratch,
    onProgress: opts.onProgress,
    progressEvery: Math.max(1, opts.progressEvery ?? 100_000),
    onPass: opts.onPass,
  };
  const replay = from ? await replayFrom(replayOpts, from) : await replayFull(replayOpts);
  opts.onProgress?.({ step: "replayed", ms: performance.now() - t0, passesMs: replay.passesMs });
  for (const p of replay.chain.problems) {
    await raise("chain_broken", p.problem, { position: p.position });
  }
  for (const m of replay.mismatches) {
    await raise("projection_mismatch", `${m.id}: ${describeMismatch(m.live, m.rebuilt)}`);
  }

  const t1 = performance.now();
  const tables = await writeTables(scratch, sink, raise, {
    readTx: opts.readTx ?? null,
    concurrency: Math.max(1, opts.chainConcurrency ?? 4),
  });
  opts.onProgress?.({ step: "tables", ms: performance.now() - t1 });

  const clean = replay.chain.ok && replay.mismatches.length === 0;
  const head = replay.head;
  const summary: AuditSummary = {
    auditedAt: new Date(now()).toISOString(),
    ok: total === 0,
    head,
    events: replay.chain.events,
    chain: { ok: replay.chain.ok, problems: replay.chain.problems.length },
    from: from ? { position: from.position, hash: from.hash } : null,
    checkpoint: clean
      ? {
        version: CHECKPOINT_VERSION,
        position: head?.position ?? 0,
        hash: head?.hash ?? "",
        documents: replay.documents,
        auditedAt: new Date(now()).toISOString(),
      }
      : null,
    projections: {
      documents: replay.documents,
      mismatches: replay.mismatches.length,
      compared: replay.compared,
      movedDuringAudit: replay.moved,
    },
    builds: totalsRow(tables.totals.overall),
    orphanOutcomes: tables.totals.orphans,
    keys: tables.keys,
    purchases: tables.purchases,
    updates: tables.updates,
    verifiedOnChain: tables.verified,
    exceptions: { total, byKind },
  };
  await sink.close(summary);
  return summary;
}

const clip = (v: unknown) => {
  const s = canonicalJson(v ?? null);
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Names only the fields that differ, so a long document's one wrong field is not clipped away. */
function describeMismatch(live: unknown, rebuilt: unknown): string {
  if (!isObject(live) || !isObject(rebuilt)) return `live ${clip(live)} rebuilt ${clip(rebuilt)}`;
  const fields = [...new Set([...Object.keys(live), ...Object.keys(rebuilt)])].sort()
    .filter((k) => canonicalJson(live[k] ?? null) !== canonicalJson(rebuilt[k] ?? null));
  return fields.map((k) => `${k}: live ${clip(live[k])} rebuilt ${clip(rebuilt[k])}`).join("; ");
}
