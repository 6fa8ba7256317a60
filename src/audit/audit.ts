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
import { listDocs } from "../commands/read.ts";
import { allProjections, registered } from "../../projections/index.ts";
import { keysProjection, keyStatus } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { purchaseFields } from "../domain/access/purchase-view.ts";
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
import { KvFile } from "../../events/kv-file.ts";
import type { TxReader } from "./chain-check.ts";
import { type AuditSink, csvRow, FileSink, type Row } from "./sink.ts";
import {
  BuildsIndex,
  discardSplicePrep,
  prepareSplice,
  saveTablesIndex,
  spliceBuilds,
  type SplicedRow,
} from "./table-splice.ts";
import { type Totals, zero } from "./totals.ts";
import type { AuditProgress } from "./progress.ts";
import {
  buildExceptions,
  buildRow,
  BuildTotals,
  type ExceptionKind,
  exceptionRow,
  iso,
} from "./build-table.ts";

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
   * Tests: the live pass on another thread (`kvPath`) counts as done only once this settles, to
   * see what this thread does meanwhile.
   */
  liveHeld?: Promise<unknown>;
  /** See `replayIntoAndCompare`: tests change the live KV between passes with it. */
  onPass?: (pass: "chain" | "live") => void | Promise<void>;
  onProgress?: (p: AuditProgress) => void;
  /** Events between two "events" reports (default 100,000). */
  progressEvery?: number;
}

const totalsRow = (t: Totals): Row => ({
  builds: t.builds,
  open: t.open,
  confirmed: t.confirmed,
  unverified: t.unverified,
  failed: t.failed,
  expired: t.expired,
  landedQuotedLamports: t.landedQuotedLamports.toString(),
  collectedLamports: t.collectedLamports.toString(),
  shortfallLamports: t.shortfallLamports.toString(),
  confirmedFeeUsd: t.confirmedFeeCents / 100,
});

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
  purchases: { total: number; paid: number; paidByCurrency: Record<string, string> };
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
  builds?: { before: AuditBuildDoc | null; after: AuditBuildDoc | null }[];
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
    // Read back below for the per-key totals and the purchases table.
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
        await opts.liveHeld;
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

  /** Writes the exceptions a build raises (a spliced table's, every flagged build's again). */
  const raise = async (b: AuditBuildDoc) => {
    for (const [kind, detail, where] of buildExceptions(b, null)) {
      await exception(kind, detail, where);
    }
  };

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

    /**
     * An incremental audit's builds table: the earlier audit's, with the rows of the builds the new
     * events changed replaced or added (table-splice.ts). False, having written nothing, when
     * something does not fit: the table is then written in full.
     */
    const splice = async (): Promise<boolean> => {
      const changed = replay.builds;
      const fromDir = opts.fromDir;
      if (!from || !fromDir || !changed || !index || !(sink instanceof FileSink)) return false;
      const prior = prep;
      if (!prior) return false;
      for (const { before, after } of changed) {
        if (!after || typeof after.buildId !== "number" || !Number.isFinite(after.buildId)) {
          return false;
        }
        // A build counted under another key or day than before: the full pass orders those.
        if (
          before?.hasBuild &&
          (!after.hasBuild || after.keyId !== before.keyId || after.day !== before.day)
        ) return false;
      }
      // The builds with exceptions that the new events left as they were (read beside the replay).
      const changedIds = new Set(changed.map((c) => c.after!.buildId));
      const flaggedDocs = [...prior.flagged].filter(([id]) => !changedIds.has(id))
        .map(([, doc]) => doc as AuditBuildDoc | null);
      if (flaggedDocs.some((d) => d === null)) return false;

      totals = BuildTotals.of(prior.totals);
      for (const { before, after } of changed) {
        if (before) totals.count(before, -1);
        totals.count(after!);
      }
      const { firstBuild } = totals;
      totals.byKey = new Map(
        [...totals.byKey].sort((a, b) => firstBuild.get(a[0])! - firstBuild.get(b[0])!),
      );
      // Every build with exceptions raises them again, in build order, as the full pass does.
      const all = [
        ...flaggedDocs.map((doc) => ({ doc: doc!, changed: false })),
        ...changed.map((c) => ({ doc: c.after!, changed: true })),
      ].sort((a, b) => a.doc.buildId - b.doc.buildId);
      const rows: SplicedRow[] = [];
      for (const { doc, changed } of all) {
        const raised = exceptionCount;
        await raise(doc);
        if (!changed) continue;
        const row = buildRow(doc, null);
        rows.push({
          id: doc.buildId,
          csv: csvRow(AUDIT_TABLES.builds, row),
          json: JSON.stringify(row),
          flag: exceptionCount > raised,
        });
      }
      index = await spliceBuilds(
        fromDir,
        prior.index,
        await sink.detach("builds"),
        rows,
        prior.copies,
      );
      return true;
    };

    spliced = await splice();
    if (!spliced) {
      await discardSplicePrep(prep);
      // `write` awaits the state's last writes before another thread reads its file.
      await table.write(replay.stateWritten);
      index = table.index;
      totals = table.totals;
    }
  } finally {
    await table.discard();
  }

  // Every key, with or without builds (byKey kept whole: the tables index saves it).
  let keys = 0;
  const issued = new Set<string>();
  for await (const k of listDocs(scratch, keysProjection, [], { batchSize: 500 })) {
    keys++;
    const t = totals.byKey.get(k.keyId) ?? zero();
    issued.add(k.keyId);
    await sink.write("totals_by_key", {
      keyId: k.keyId,
      purchaseId: k.purchaseId,
      wallet: k.wallet,
      keyStatus: keyStatus(k),
      unverifiedCount: k.unverifiedCount,
      ...totalsRow(t),
    });
  }
  for (const [keyId, t] of totals.byKey) {
    if (issued.has(keyId)) continue;
    await sink.write("totals_by_key", {
      keyId,
      purchaseId: null,
      wallet: null,
      keyStatus: "unknown",
      unverifiedCount: null,
      ...totalsRow(t),
    });
    await exception("build_for_unknown_key", `${t.builds} build(s) by key ${keyId}, never issued`, {
      keyId,
    });
  }
  for (const day of [...totals.byDay.keys()].sort()) {
    await sink.write("totals_by_day", { day, ...totalsRow(totals.byDay.get(day)!) });
  }

  // Access purchases.
  let purchases = 0;
  let paid = 0;
  const paidByCurrency: Record<string, bigint> = {};
  for await (const p of listDocs(scratch, purchasesProjection, [], { batchSize: 500 })) {
    purchases++;
    if (p.status === "paid") {
      paid++;
      paidByCurrency[p.currency] = (paidByCurrency[p.currency] ?? 0n) + BigInt(p.amount);
    }
    // The fields every reader of a purchase shows, with the wallet in the column it always had.
    const { purchaseId, ...shown } = purchaseFields(p, iso);
    await sink.write("purchases", {
      purchaseId,
      wallet: p.wallet,
      ...shown,
      activeKeyId: p.activeKeyId,
      keyIds: p.keyIds.join(" "),
    });
  }

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
    purchases: {
      total: purchases,
      paid,
      paidByCurrency: Object.fromEntries(
        Object.entries(paidByCurrency).map(([c, v]) => [c, v.toString()]),
      ),
    },
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
