/**
 * Audit checkpoints and the incremental audit that starts from one.
 *
 * A clean full audit (chain intact, projections equal) writes `checkpoint.json` beside its
 * tables, and keeps its state KV (`state.sqlite3`): the audit's own folds (builds, keys,
 * purchases, from which the tables are made) and every projection document as it was at the
 * checkpoint (doc-chunks.ts).
 *
 * `audit --from <dir>` then checks that the log still extends the checkpoint and audits only what
 * came after:
 * - the sealed segments up to the checkpoint must have the fingerprint it recorded (key and
 *   versionstamp of each: any rewrite through KV changes it); the few events between the last
 *   of them and the checkpoint position are hashed again, and the event at the checkpoint must
 *   still carry its hash;
 * - the events after it are verified link by link and folded into a copy of the state;
 * - every projection document they touch is rebuilt (its value at the checkpoint plus the new
 *   events) and compared with the live one, settled against the log like in a full audit;
 * - the tables are made from the updated state, by the same code as a full audit's, so they are
 *   equal to what a full audit would write.
 * Documents no new event touches were compared by the audit that wrote the checkpoint; an edit
 * made to one of them behind the store's back later is found by the next full audit.
 */
import { HEAD, type LogHead, projectionKey, PROJECTIONS } from "../../events/keys.ts";
import { hashAt, readLog, type ReadStats, SegmentFingerprint } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";
import { keyId } from "../../projections/key-hash.ts";
import { LiveCut } from "../../projections/live-cut.ts";
import type { Projection } from "../../events/projection.ts";
import {
  type ChainProblem,
  type ChainVerification,
  ChainVerifier,
  checkNothingAfter,
} from "../../projections/chain-check.ts";
import { ProjectionFolder } from "../../projections/folder.ts";
import { ProjectionBuffer } from "../../projections/replay-memory.ts";
import { ProjectionsByType } from "../../projections/touches.ts";
import type { ProjectionMismatch } from "../../projections/compare-stores.ts";
import { ChunkFile, DocChunks } from "./doc-chunks.ts";
import { KvFile } from "../../events/kv-file.ts";
import { docText } from "../../projections/doc-digest.ts";
import { liveText, type LiveTexts } from "./live-text-worker.ts";
import { ByteSink } from "../kernel/json-bytes.ts";
import { bytesEqual } from "../kernel/bytes.ts";

/** 2: the state holds the audit's builds in packs (folds.ts); a version 1 state cannot be read. */
export const CHECKPOINT_VERSION = 2;

/**
 * The most events after a checkpoint an incremental audit takes: it holds them, and the documents
 * they touch, in memory (the audit runs with a 160 MiB heap, deno.json). Past it, a full audit.
 */
export const MAX_INCREMENTAL_EVENTS = 25_000;

export class TooFarBehindError extends Error {
  constructor(readonly events: number) {
    super(
      `${events} events since the checkpoint, more than an incremental audit takes ` +
        `(${MAX_INCREMENTAL_EVENTS}): run a full audit (it writes a new checkpoint)`,
    );
  }
}

export interface Checkpoint {
  version: number;
  /** The log position and head hash the audit covered. */
  position: number;
  hash: string;
  /** The sealed segments up to `through` (a position at or below `position`). */
  sealed: { through: number; count: number; digest: string; hash: string };
  /** Projection documents at the checkpoint (kept in the state KV). */
  documents: number;
  auditedAt: string;
}

export async function readCheckpoint(dir: string): Promise<Checkpoint> {
  const c = JSON.parse(await Deno.readTextFile(`${dir}/checkpoint.json`)) as Checkpoint;
  if (c.version !== CHECKPOINT_VERSION) {
    throw new Error(
      `${dir}/checkpoint.json has version ${c.version}, not ${CHECKPOINT_VERSION}: ` +
        "its state is laid out as an older audit kept it; run a full audit (it writes a new checkpoint)",
    );
  }
  return c;
}

export async function makeCheckpoint(
  kv: Deno.Kv,
  head: LogHead | null,
  sealed: SegmentFingerprint,
  documents: number,
  auditedAt: string,
): Promise<Checkpoint> {
  return {
    version: CHECKPOINT_VERSION,
    position: head?.position ?? 0,
    hash: head?.hash ?? "",
    sealed: {
      through: sealed.through,
      count: sealed.count,
      digest: sealed.digest,
      hash: await hashAt(kv, sealed.through),
    },
    documents,
    auditedAt,
  };
}

export interface IncrementalReport {
  chain: ChainVerification;
  /** Events after the checkpoint. */
  newEvents: number;
  /** Projection documents the new events touched, each compared with the live one. */
  documents: number;
  mismatchCount: number;
  moved: number;
  sealed: SegmentFingerprint;
  head: LogHead | null;
  /** The tracked fold's documents the new events touched: before and after them. */
  tracked: { before: unknown; after: unknown }[];
  /** The touched documents' writes to the state: settled before the state is used again. */
  stateWritten: Promise<void>;
}

/**
 * Verifies that the log extends `from`, verifies and folds what came after into `state` (a copy
 * of the checkpoint's state KV), and compares the documents it touched.
 */
export async function replayFrom(
  source: Deno.Kv,
  state: Deno.Kv,
  projections: Projection[],
  auditFolds: Projection[],
  from: Checkpoint,
  opts: {
    stats?: ReadStats;
    /** The file the state's document chunks are in (doc-chunks.ts `ChunkFile`); null: the KV. */
    docsPath?: string | null;
    /** The state KV's file, when it is one: where its chunks are is then read from it directly. */
    statePath?: string | null;
    onChainProblem?: (p: ChainProblem) => void | Promise<void>;
    onMismatch?: (m: ProjectionMismatch) => void | Promise<void>;
    /**
     * Computes the fingerprint of the sealed segments up to a position in the source (default:
     * `SegmentFingerprint.of` on this thread; the CLI's audit of a file uses a worker).
     */
    fingerprint?: (through: number) => Promise<SegmentFingerprint>;
    /** An audit fold whose touched documents are reported before and after (`tracked`). */
    track?: string;
    /**
     * Reads the live documents at `keys` in one snapshot, as text (live-text-worker.ts: the CLI's
     * audit of a file, on the other core); null, or unset: each is read through `source`.
     */
    liveTexts?: (keys: Deno.KvKey[]) => Promise<LiveTexts | null>;
  } = {},
): Promise<IncrementalReport> {
  const head = (await source.get<LogHead>(HEAD)).value;
  const to = head?.position ?? 0;
  if (to - from.position > MAX_INCREMENTAL_EVENTS) throw new TooFarBehindError(to - from.position);
  const verifier = new ChainVerifier().startAt(from.sealed.through, from.sealed.hash);
  const problem = (position: number, text: string) =>
    verifier.problems.push({ position, problem: text });

  if (to < from.position) {
    problem(to, `the log ends at ${to}, before the checkpoint at ${from.position}`);
  }
  // The prefix proof reads every sealed segment up to the checkpoint: it runs alongside the rest
  // (on the other core when `opts.fingerprint` is a worker), and its finding, if any, goes where
  // it would have gone had it run first. Findings are reported once it is in.
  const proof = (opts.fingerprint ??
    ((through: number) => SegmentFingerprint.of(source, through, opts.stats)))(from.sealed.through);
  proof.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
  const proofAt = verifier.problems.length;

  const sealed = new SegmentFingerprint(from.sealed.through, from.sealed.count, from.sealed.digest);
  const stats: ReadStats = opts.stats ?? { reads: 0 };
  stats.onSegment = (last, vs) => {
    if (last > from.sealed.through && last <= to) sealed.add(last, vs);
  };
  const folder = new ProjectionFolder(state, auditFolds, { existing: true, cacheSize: 4_000 });
  // The state's Bloom filter (and its chunk index, when the state is not a file) do not depend on
  // what the new events touch: read them while the events are.
  const file = opts.docsPath ? await ChunkFile.openIfThere(opts.docsPath) : null;
  const stateFile = opts.statePath ? KvFile.open(opts.statePath) : null;
  const chunks = new DocChunks(state, file, stateFile);
  chunks.prefetch();
  const closeFiles = () => {
    file?.close();
    stateFile?.close();
  };
  // Closed once the state is written (`stateWritten`), or here when anything before it fails.
  let handedOver = false;
  try {
    const after: StoredEvent[] = [];
    for await (
      const batch of readLog(source, {
        head,
        from: from.sealed.through + 1,
        to,
        prevHash: from.sealed.hash,
        stats,
      })
    ) {
      for (const r of batch) {
        verifier.checkRead(r);
        const e = r.event;
        if (e.position === from.position && e.hash !== from.hash) {
          problem(e.position, "the event at the checkpoint is not the one the checkpoint verified");
        }
        if (e.position > from.position) after.push(e);
      }
    }
    stats.onSegment = undefined;
    // The audit's folds: their documents read ten to a read, then the new events folded in.
    const keys = [...keysTouched(after, auditFolds).values()];
    const isTracked = (k: Deno.KvKey) =>
      opts.track !== undefined && k[PROJECTIONS.length] === opts.track;
    const trackedKeys = keys.filter(isTracked);
    // The folds, and the projection documents below, are independent (disjoint keys in the
    // state; the comparison reads the source): each waits on KV reads and writes, so they overlap.
    const folding = (async () => {
      // One read of every fold document the new events touch, absent ones included: a new
      // document then costs no read of its own when its first event comes (a read each, queued
      // behind the state's other reads and writes, was a second of a 10,000-event audit).
      const before = await folder.preload(keys);
      const trackedBefore = before.filter((_, i) => isTracked(keys[i]));
      for (const e of after) await folder.apply(e);
      await folder.flush();
      // Folded again here from their values before: read back from the state, they waited behind
      // its other writes (0.3-0.5 s at 10,000 events).
      const tracking = auditFolds.find((p) => p.name === opts.track);
      const trackedAfter = tracking
        ? foldInMemory(tracking, trackedKeys, trackedBefore, after)
        : [];
      return trackedKeys.map((_, i) => ({ before: trackedBefore[i], after: trackedAfter[i] }));
    })();
    folding.catch(() => {}); // awaited below
    const chain = verifier.finish(head);
    // The count covers the events read: from the last sealed point before the checkpoint.
    await checkNothingAfter(source, head, chain);

    // Each touched document: its value at the checkpoint, then the new events, in log order.
    const touched = keysTouched(after, projections);
    const touchedKeys = [...touched.values()];
    // The live documents are read while this thread rebuilds them (in `touched`'s order).
    const reading = opts.liveTexts?.(touchedKeys) ?? null;
    reading?.catch(() => {}); // awaited below
    await chunks.load(touchedKeys);
    const rebuilt = new Map<string, { key: Deno.KvKey; doc: unknown }>();
    for (const [id, key] of touched) rebuilt.set(id, { key, doc: (await chunks.get(key)) ?? null });
    for (const e of after) {
      for (const p of projections) {
        for (const sub of p.keysOf(e)) {
          const slot = rebuilt.get(keyId(projectionKey(p.name, sub)))!;
          slot.doc = p.evolve(slot.doc as never, e, sub);
        }
      }
    }
    const cut = new LiveCut(source, projections, head);
    const mismatches: ProjectionMismatch[] = [];
    const docs = [...rebuilt].map(([id, { key, doc }]) => ({ id, key, rebuilt: doc }));
    // Compared with the live documents (the source) while they are written to the state.
    const settling = settleAll(cut, docs, await reading);
    settling.catch(() => {}); // awaited below
    for (const d of docs) await chunks.set(d.key, d.rebuilt);
    // Written while the caller writes its tables; it awaits this before it says the audit is done.
    const stateWritten = chunks.flush().finally(closeFiles);
    handedOver = true;
    stateWritten.catch(() => {}); // awaited by the caller
    const results = await settling;
    for (let i = 0; i < docs.length; i++) {
      const wrong = results[i];
      if (wrong) mismatches.push({ key: docs[i].id, live: wrong.live, rebuilt: wrong.expected });
    }
    const tracked = await folding;

    const before = await proof;

    if (before.count !== from.sealed.count || before.digest !== from.sealed.digest) {
      verifier.problems.splice(proofAt, 0, {
        position: from.sealed.through,
        problem: `the sealed log up to ${from.sealed.through} changed since the checkpoint ` +
          `(${before.count} segments, the checkpoint saw ${from.sealed.count}): run a full audit`,
      });
      chain.ok = false;
    }
    for (const p of verifier.problems) await opts.onChainProblem?.(p);
    for (const m of mismatches) await opts.onMismatch?.(m);
    const mismatchCount = mismatches.length;
    return {
      chain,
      newEvents: after.length,
      documents: rebuilt.size,
      mismatchCount,
      moved: cut.moved.size,
      sealed,
      head,
      tracked,
      stateWritten,
    };
  } finally {
    if (!handedOver) closeFiles();
  }
}

/**
 * `cut.settleMany(docs)`, with the live texts of a snapshot (`live`, read in `docs`' order) taken
 * first: a document no event after the cut moved up to the snapshot's head, whose live text is its
 * rebuilt one's, is equal (equal JSON text is an equal value). Every other one (moved, differing,
 * or not read) is settled through the KV as before, which names a real mismatch and passes one
 * that only differs in property order.
 */
async function settleAll(
  cut: LiveCut,
  docs: { id: string; key: Deno.KvKey; rebuilt: unknown }[],
  live: LiveTexts | null,
): Promise<({ live: unknown; expected: unknown } | null)[]> {
  if (!live) return await cut.settleMany(docs);
  if (live.starts.length !== docs.length) throw new Error("live texts for other documents");
  // A snapshot older than the audit's head (another file than the one audited) proves nothing.
  if (live.at < cut.seen) return await cut.settleMany(docs);
  if (live.at > cut.seen) await cut.poll(live.at);
  const out: ({ live: unknown; expected: unknown } | null)[] = new Array(docs.length).fill(null);
  const rest: number[] = [];
  const mine = new ByteSink();
  docs.forEach((d, i) => {
    const text = liveText(live, i);
    mine.reset();
    if (d.rebuilt !== null && d.rebuilt !== undefined) mine.text(docText(d.rebuilt));
    if (
      text === null || !bytesEqual(text, mine.bytes()) ||
      (cut.moved.size > 0 && cut.moved.has(d.id))
    ) rest.push(i);
  });
  const settled = await cut.settleMany(rest.map((i) => docs[i]));
  rest.forEach((i, j) => (out[i] = settled[j]));
  return out;
}

/** The documents of `p` at `keys` after `events`, from their values before them (null: none). */
function foldInMemory(
  p: Projection,
  keys: Deno.KvKey[],
  before: unknown[],
  events: StoredEvent[],
): unknown[] {
  const docs = new ProjectionBuffer();
  keys.forEach((key, i) => {
    if (before[i] !== null && before[i] !== undefined) {
      docs.docs.set(keyId(key), { key, doc: before[i] });
    }
  });
  const only = new ProjectionsByType([p]);
  for (const e of events) docs.apply(only.of(e), e);
  return keys.map((key) => docs.docs.get(keyId(key))?.doc ?? null);
}

/** The document keys `events` touch in `projections`, by id, in the order first touched. */
function keysTouched(events: StoredEvent[], projections: Projection[]): Map<string, Deno.KvKey> {
  const touched = new Map<string, Deno.KvKey>();
  for (const e of events) {
    for (const p of projections) {
      for (const sub of p.keysOf(e)) {
        const key = projectionKey(p.name, sub);
        touched.set(keyId(key), key);
      }
    }
  }
  return touched;
}
