/**
 * The auditor: a streamed replay of the event log that verifies the hash chain and rebuilds
 * every projection, compared with the live projections (by digest, or document by document when
 * they differ: projections/replay.ts), then a reconciliation of builds, fees and purchases written
 * through an `AuditSink`.
 *
 * Memory is bounded by a few per-key and per-day totals and the projection documents still open
 * at one point of the log; events, builds and purchases are read a page at a time. The audited KV
 * is only read.
 */
import { canonicalJson } from "../../events/hash.ts";
import { HEAD, type LogHead } from "../../events/keys.ts";
import { allProjections, registered } from "../../projections/index.ts";
import { keysProjection } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import type { ChainProblem } from "../../projections/chain-check.ts";
import type { ProjectionMismatch } from "../../projections/compare-stores.ts";
import { replayIntoAndCompare } from "../../projections/replay.ts";
import type { Projection } from "../../events/projection.ts";
import { type ReadStats, SegmentFingerprint } from "../../events/log.ts";
import { type Checkpoint, makeCheckpoint, replayFrom } from "./checkpoint.ts";
import { ChunkFile, DocChunks, DocChunkWriter } from "./doc-chunks.ts";
import { AUDIT_BUILD, type AuditBuildDoc, auditProjections } from "./folds.ts";
import { readBuilds } from "./state-builds.ts";
import { changedIn, type Pack } from "../../projections/packed.ts";
import { liveInWorker } from "./live-worker.ts";
import { fingerprintInWorker } from "./fingerprint-worker.ts";
import { liveTextsInWorker } from "./live-text-worker.ts";
import { FullBuildsTable } from "./full-builds-table.ts";
import { type ChangedBuild, spliceBuildsTable } from "./spliced-builds-table.ts";
import {
  type PurchasesSummary,
  totalsRow,
  writePurchasesTable,
  writeTotalsTables,
} from "./totals-tables.ts";
import { KvFile } from "../../events/kv-file.ts";
import type { TxReader } from "./chain-check.ts";
import { type AuditSink, FileSink, type Row } from "./sink.ts";
import { BuildsIndex, discardSplicePrep, prepareSplice, saveTablesIndex } from "./table-splice.ts";
import type { AuditProgress } from "./progress.ts";
import { BuildTotals, type ExceptionKind, exceptionRow } from "./build-table.ts";

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
  exceptions: ["kind", "position", "buildId", "keyId", "mint", "signature", "detail"],
};

export interface AuditOptions {
  /** The KV under audit; only read. */
  kv: Deno.Kv;
  /**
   * An empty KV for what the audit rebuilds and reads back (a temp file, or ":memory:"): its
   * own build folds, keys and purchases, and every projection when they must be compared one by
   * one.
   */
  scratch: Deno.Kv;
  sink: AuditSink;
  /** Set for --verify-chain: re-reads every landed creation from the chain. */
  readTx?: TxReader | null;
  chainConcurrency?: number;
  /** Documents the scratch folds keep in memory (default 4,000). */
  cacheSize?: number;
  /** See `replayIntoAndCompare`; tests lower it to force the document-by-document comparison. */
  maxOpen?: number;
  batchSize?: number;
  now?: () => number;
  /** Audit only what came after this checkpoint; `scratch` must then be a copy of its state. */
  from?: Checkpoint | null;
  /**
   * The directory of the audit that wrote `from`: its builds table is spliced instead of written
   * again when it can be (table-splice.ts).
   */
  fromDir?: string | null;
  /**
   * Save, beside a checkpoint's tables, what the next incremental audit splices them by
   * (table-splice.ts; the CLI does, with the checkpoint it writes). Needs a `FileSink`.
   */
  tablesIndex?: boolean;
  /** Counts the KV entries the log reads take. */
  stats?: ReadStats;
  /**
   * The audited KV's file path, when it is one: the full audit's live pass then runs in a worker
   * on another core, alongside the chain pass (live-worker.ts), and the log's sealed segments are
   * read from the file (`KvFile.range`). Unset: one thread, everything through `kv`.
   */
  kvPath?: string | null;
  /**
   * A file beside `scratch` for the bytes of the documents the state keeps (doc-chunks.ts
   * `ChunkFile`); a full audit starts it empty. Unset: they go into `scratch`.
   */
  docsPath?: string | null;
  /** `scratch`'s file, when it is one (an incremental audit finds its chunks there). */
  statePath?: string | null;
  /**
   * Builds (by the span of their ids) from which the full audit writes the later half of the
   * builds table on another thread (tables-worker.ts; needs `statePath` and a `FileSink`).
   * Default 50,000; tests lower it.
   */
  tablesWorkerMin?: number;
  /**
   * Tests: called when the live pass on another thread (`kvPath`) is done; the pass counts as
   * done only once what it returns settles, to see what this thread does meanwhile.
   */
  liveHeld?: () => Promise<unknown>;
  /** See `replayIntoAndCompare`: tests change the live KV between passes with it. */
  onPass?: (pass: "chain" | "live") => void | Promise<void>;
  onProgress?: (p: AuditProgress) => void;
  /** Events between two "events" reports (default 100,000). */
  progressEvery?: number;
}

export interface AuditSummary {
  auditedAt: string;
  ok: boolean;
  head: LogHead | null;
  events: number;
  chain: { ok: boolean; problems: number };
  /** `compared`: "digest" when the digests matched, "documents" when compared one by one. */
  /** The checkpoint an incremental audit started from. */
  from: { position: number; hash: string } | null;
  /** Where the next incremental audit can start (written when the log and projections held). */
  checkpoint: Checkpoint | null;
  /** KV entries the log reads took, per 1,000 events of the log. */
  logReadsPer1000Events: number;
  projections: {
    documents: number;
    mismatches: number;
    /** "incremental": only the documents events after the checkpoint touched. */
    compared: "digest" | "documents" | "incremental";
    /** Documents the service changed while the audit ran, each settled against the log. */
    movedDuringAudit: number;
  };
  builds: Row;
  orphanOutcomes: number;
  keys: number;
  purchases: PurchasesSummary;
  verifiedOnChain: number | null;
  /** "spliced": the builds table is the earlier audit's with the changed rows replaced. */
  tables: "written" | "spliced";
  exceptions: { total: number; byKind: Partial<Record<ExceptionKind, number>> };
}

type Exception = (kind: ExceptionKind, detail: string, at?: Partial<Row>) => Promise<void>;

/** What the tables need from either replay, and the checkpoint it leaves (null: none). */
interface Replayed {
  head: LogHead | null;
  chain: { ok: boolean; events: number; problems: unknown[] };
  documents: number;
  mismatchCount: number;
  compared: "digest" | "documents" | "incremental";
  moved: number;
  checkpoint: Checkpoint | null;
  /** An incremental audit's changed builds: each one's document before and after the new events. */
  builds?: ChangedBuild[];
  /** State writes still under way (an incremental audit's touched documents): awaited last. */
  stateWritten?: Promise<void>;
  /** The full audit's passes and how long each took. */
  passesMs?: Partial<Record<string, number>>;
}

const chainException = (exception: Exception) => (p: ChainProblem) =>
  exception("chain_broken", p.problem, { position: p.position });
const mismatchException = (exception: Exception) => (m: ProjectionMismatch) =>
  exception("projection_mismatch", `${m.key}: ${describeMismatch(m.live, m.rebuilt)}`);

/** The whole log: chain, rebuild and comparison; keeps the state for a later incremental audit. */
async function full(
  opts: AuditOptions,
  stats: ReadStats,
  exception: Exception,
  meanwhile: (liveEnded: Promise<void>) => Promise<void>,
): Promise<Replayed> {
  const { kv, scratch } = opts;
  const head = (await kv.get<LogHead>(HEAD)).value;
  const sealed = new SegmentFingerprint();
  const to = head?.position ?? 0;
  stats.onSegment = (last, vs) => {
    if (last <= to) sealed.add(last, vs);
  };
  const kvPath = opts.kvPath ?? null;
  const docsPath = opts.docsPath ?? null;
  // The worker writes the file itself; on one thread it is opened here.
  const file = docsPath && !kvPath ? await ChunkFile.open(docsPath, { fresh: true }) : null;
  const docs = kvPath ? null : new DocChunkWriter(scratch, file);
  const moved: { key: Deno.KvKey; doc: unknown }[] = [];
  const progress = opts.onProgress;
  const every = Math.max(1, opts.progressEvery ?? 100_000);
  // The log's segments straight from the file, when there is one this process can read.
  const logFile = kvPath ? KvFile.open(kvPath) : null;
  const replay = await replayIntoAndCompare(kv, scratch, allProjections, {
    file: logFile,
    onEvent: progress
      ? (e) => {
        if (e.position % every === 0) progress({ step: "events", done: e.position, of: to });
      }
      : undefined,
    extra: auditProjections,
    // Read back after the builds table, for the totals per key and the purchases (totals-tables).
    keepInScratch: [keysProjection.name, purchasesProjection.name],
    batchSize: opts.batchSize,
    // Its scratch folds (builds, keys, purchases) are touched again soon after they change: a
    // small cache is enough, and a large one was most of the audit's peak memory.
    cacheSize: opts.cacheSize ?? 4_000,
    maxOpen: opts.maxOpen,
    maxMismatches: 0,
    stats,
    onLiveDoc: docs ? (key, text, id) => docs.add(key, text, id) : undefined,
    liveElsewhere: kvPath
      ? async (req) => {
        const live = await liveInWorker({ ...req, path: kvPath, pack: true, docsPath }, scratch);
        await opts.liveHeld?.();
        return live;
      }
      : undefined,
    meanwhile,
    onMovedDoc: (key, doc) => {
      moved.push({ key, doc });
    },
    onPass: async (pass) => {
      // The first pass fingerprints the sealed log; the second reads it again.
      if (pass === "chain") stats.onSegment = undefined;
      await opts.onPass?.(pass);
    },
    onChainProblem: chainException(exception),
    onMismatch: mismatchException(exception),
  }).finally(() => logFile?.close());
  stats.onSegment = undefined;
  await docs?.finish();
  file?.close();
  let checkpoint: Checkpoint | null = null;
  if (replay.equal && replay.compared === "digest") {
    const file = docsPath ? await ChunkFile.open(docsPath, { fresh: false }) : null;
    try {
      const chunks = new DocChunks(scratch, file);
      for (const m of moved) await chunks.set(m.key, m.doc);
      await chunks.flush();
    } finally {
      file?.close();
    }
    const now = opts.now ?? Date.now;
    checkpoint = await makeCheckpoint(
      kv,
      head,
      sealed,
      replay.documents,
      new Date(now()).toISOString(),
    );
  }
  return {
    head,
    chain: replay.chain,
    documents: replay.documents,
    mismatchCount: replay.mismatchCount,
    compared: replay.compared,
    moved: replay.moved ?? 0,
    checkpoint,
    passesMs: replay.passesMs,
  };
}

/** Only what came after `from` (see checkpoint.ts); `scratch` is a copy of its state. */
async function incremental(
  opts: AuditOptions,
  from: Checkpoint,
  stats: ReadStats,
  exception: Exception,
): Promise<Replayed> {
  // The touched live documents are read from the file on the other core (live-text-worker.ts).
  const texts = opts.kvPath ? liveTextsInWorker(opts.kvPath) : null;
  const r = await replayFrom(opts.kv, opts.scratch, allProjections, auditFoldsOf(), from, {
    stats,
    docsPath: opts.docsPath ?? null,
    statePath: opts.statePath ?? null,
    track: AUDIT_BUILD,
    // The prefix proof on the other core when the KV is a file (fingerprint-worker.ts).
    fingerprint: opts.kvPath
      ? async (through) => {
        const r = await fingerprintInWorker({ path: opts.kvPath!, through });
        stats.reads += r.reads;
        return r.fingerprint;
      }
      : undefined,
    liveTexts: texts ? (keys) => texts.read(keys) : undefined,
    onChainProblem: chainException(exception),
    onMismatch: mismatchException(exception),
  }).finally(() => texts?.end());
  const now = opts.now ?? Date.now;
  const clean = r.chain.ok && r.mismatchCount === 0;
  return {
    head: r.head,
    chain: { ok: r.chain.ok, events: r.head?.position ?? 0, problems: r.chain.problems },
    documents: r.documents,
    mismatchCount: r.mismatchCount,
    compared: "incremental",
    moved: r.moved,
    // The packs the new events touched, as the builds in them that changed.
    builds: r.tracked.flatMap(({ before, after }) =>
      changedIn(before as Pack<AuditBuildDoc> | null, after as Pack<AuditBuildDoc> | null)
    ),
    stateWritten: r.stateWritten,
    checkpoint: clean
      ? await makeCheckpoint(
        opts.kv,
        r.head,
        r.sealed,
        from.documents,
        new Date(now()).toISOString(),
      )
      : null,
  };
}

/** The folds the tables are made from, as the full audit keeps them in its state. */
// The keys and purchases folds run as the store runs them (declared events only, upcast first).
const auditFoldsOf = (): Projection[] =>
  [
    registered(keysProjection),
    registered(purchasesProjection),
    ...auditProjections,
  ] as Projection[];

export async function runAudit(opts: AuditOptions): Promise<AuditSummary> {
  const { scratch, sink } = opts;
  const now = opts.now ?? Date.now;
  /** Exceptions by kind, in the order each kind first came; the summary lists them so. */
  const byKind: Partial<Record<ExceptionKind, number>> = {};
  let exceptionCount = 0;
  const exception: Exception = async (kind, detail, at = {}) => {
    exceptionCount++;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    await sink.write("exceptions", exceptionRow(kind, detail, at));
  };
  /** Adds exceptions counted apart (the builds table's early rows', its worker's). */
  const addCounted = (more: Partial<Record<ExceptionKind, number>>, count: number) => {
    for (const [kind, n] of Object.entries(more) as [ExceptionKind, number][]) {
      byKind[kind] = (byKind[kind] ?? 0) + n;
    }
    exceptionCount += count;
  };

  const stats: ReadStats = opts.stats ?? { reads: 0 };
  const from = opts.from ?? null;
  // What splicing the builds table needs from the earlier audit, gathered beside the replay.
  const preparing = from && opts.fromDir && opts.tablesIndex && sink instanceof FileSink &&
      !opts.readTx
    ? prepareSplice(
      opts.fromDir,
      from,
      sink.dir,
      (ids) => readBuilds(scratch, ids),
    )
    : null;
  preparing?.catch(() => {}); // awaited below
  // Builds, in buildId order, with their totals.
  let totals = new BuildTotals();
  const readTx = opts.readTx ?? null;
  // Where each builds row starts, kept beside a checkpoint for the next incremental audit.
  let index = opts.tablesIndex && sink instanceof FileSink && readTx === null
    ? new BuildsIndex()
    : null;
  // Written in full unless an incremental audit splices the earlier table (below).
  const table = new FullBuildsTable({
    state: scratch,
    statePath: opts.statePath ?? null,
    sink,
    columns: { builds: AUDIT_TABLES.builds, exceptions: AUDIT_TABLES.exceptions },
    readTx,
    concurrency: Math.max(1, opts.chainConcurrency ?? 4),
    tablesWorkerMin: opts.tablesWorkerMin,
    totals,
    index,
    raise: exception,
    addCounted,
  });

  let replay: Replayed;
  const replayStart = performance.now();
  try {
    replay = from
      ? await incremental(opts, from, stats, exception)
      : await full(opts, stats, exception, (liveEnded) => table.writeEarly(liveEnded));
  } catch (e) {
    await discardSplicePrep(await preparing?.catch(() => null) ?? null);
    await table.discard();
    throw e;
  }
  const head = replay.head;
  let tablesStart = performance.now();
  let spliced = false;
  // From here until the builds table is written, a failure leaves no early part behind.
  try {
    const prep = await preparing;
    opts.onProgress?.({
      step: "replayed",
      ms: performance.now() - replayStart,
      passesMs: replay.passesMs ?? {},
    });
    tablesStart = performance.now();

    // An incremental audit splices the earlier audit's table when it can (spliced-builds-table.ts).
    const fromDir = opts.fromDir;
    const splicedTable = from && fromDir && replay.builds && prep && index &&
        sink instanceof FileSink
      ? await spliceBuildsTable({
        fromDir,
        prior: prep,
        changed: replay.builds,
        sink,
        columns: AUDIT_TABLES.builds,
        raise: exception,
      })
      : null;
    spliced = splicedTable !== null;
    if (splicedTable) {
      index = splicedTable.index;
      totals = splicedTable.totals;
    } else {
      await discardSplicePrep(prep);
      // `write` awaits the state's last writes before another thread reads its file.
      await table.write(replay.stateWritten);
      index = table.index;
      totals = table.totals;
    }
  } finally {
    await table.discard();
  }

  const keys = await writeTotalsTables(scratch, sink, totals, exception);
  const purchases = await writePurchasesTable(scratch, sink);

  // The state is whole before the audit says it is done (the caller then keeps or moves it).
  await replay.stateWritten;
  opts.onProgress?.({
    step: "tables",
    ms: performance.now() - tablesStart,
    laterBuilds: table.laterBuilds,
    earlyBuilds: table.earlyBuilds,
  });

  const summary: AuditSummary = {
    auditedAt: new Date(now()).toISOString(),
    ok: exceptionCount === 0,
    head,
    events: replay.chain.events,
    chain: { ok: replay.chain.ok, problems: replay.chain.problems.length },
    projections: {
      documents: replay.documents,
      mismatches: replay.mismatchCount,
      compared: replay.compared,
      movedDuringAudit: replay.moved,
    },
    from: from ? { position: from.position, hash: from.hash } : null,
    checkpoint: replay.checkpoint,
    logReadsPer1000Events: replay.chain.events
      ? Math.round((stats.reads * 1000 / replay.chain.events) * 100) / 100
      : 0,
    builds: totalsRow(totals.overall),
    orphanOutcomes: totals.orphans,
    keys,
    purchases,
    verifiedOnChain: readTx ? table.verified : null,
    tables: spliced ? "spliced" : "written",
    exceptions: { total: exceptionCount, byKind },
  };
  await sink.close(summary);
  if (index && replay.checkpoint && sink instanceof FileSink) {
    await saveTablesIndex(sink.dir, index, totals, replay.checkpoint);
  }
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
