/**
 * Replay: rebuild every projection from the log alone and compare it with the live one, with flat
 * memory (the audit's replay; replay-memory.ts holds the simple one). The log is streamed and
 * verified link by link; the rebuilt documents are folded into a digest compared with the live
 * projections' digest, and only compared one by one when the digests differ.
 */
import { HEAD, type LogHead } from "../events/keys.ts";
import { type ReadEvent, readLog, type ReadStats } from "../events/log.ts";
import type { StoredEvent } from "../events/types.ts";
import type { KvFile } from "../events/kv-file.ts";
import type { Projection } from "../events/projection.ts";
import { type ChainProblem, ChainVerifier, checkNothingAfter } from "./chain-check.ts";
import { compareProjectionStores, type ProjectionMismatch } from "./compare-stores.ts";
import { DigestFolder, LastTouch, type LastTouchPart, splitByWork } from "./digest-fold.ts";
import { LiveCut } from "./live-cut.ts";
import {
  addStoredDocuments,
  digestLiveProjections,
  Held,
  type ProjectionDigest,
  randomSalt,
} from "./doc-digest.ts";
import { ProjectionFolder } from "./folder.ts";
import { typesFolded } from "./touches.ts";
import type { ReplayReport } from "./replay-memory.ts";

export interface StreamingReplayReport extends ReplayReport {
  mismatchCount: number;
  /**
   * How the projections were compared: "digest" when the rebuilt and live digests matched,
   * "documents" when they were compared one by one (asked for, or the digests differed).
   */
  compared: "digest" | "documents";
  /**
   * Wall time of each pass that ran, in order: "chain" (verify, note last touches, the scratch
   * folds), "fold" (the documents into the digest), "live" (the live projections' digest),
   * "documents" (fold into scratch and compare one by one).
   */
  passesMs: Partial<Record<"chain" | "fold" | "live" | "settle" | "documents", number>>;
  /** Documents the service changed after the audit's head, each settled against the log. */
  moved?: number;
}

/**
 * `replayAndCompare` with flat memory. The rebuilt projections are not kept: a first pass over
 * the log verifies the chain, calls `onEvent` and notes where each document is touched last; a
 * second folds them into a digest (`DigestFolder`), compared with a digest of the live ones. Only
 * when the digests differ (or `exact` is set, or too many documents stay open) is the log folded
 * into `scratch` (an empty KV) and compared document by document, which names every mismatch but
 * writes every document. `extra` folds and the projections named in `keepInScratch` are always
 * written to `scratch`, for the caller to read afterwards.
 */
export async function replayIntoAndCompare(
  source: Deno.Kv,
  scratch: Deno.Kv,
  projections: Projection[],
  opts: {
    batchSize?: number;
    /** Documents the scratch folds keep in memory before writing some out (default 20,000). */
    cacheSize?: number;
    /**
     * The most documents the digest fold may hold open at once (default 50,000); past it the
     * projections are compared document by document instead.
     */
    maxOpen?: number;
    maxMismatches?: number;
    /** Skip the digest and compare document by document. */
    exact?: boolean;
    /** Extra folds (e.g. the audit's) written to scratch beside the real projections. */
    extra?: Projection[];
    /** Projections (by name) the caller reads from scratch afterwards: always written there. */
    keepInScratch?: string[];
    onEvent?: (e: StoredEvent) => void | Promise<void>;
    /** Counts the KV entries the log reads take. */
    stats?: ReadStats;
    /** `source`'s file, when this process can read it: the log's segments are read from it. */
    file?: KvFile | null;
    /** Each live document that went into the digest, as JSON text (the audit's state keeps it). */
    onLiveDoc?: (key: Deno.KvKey, text: string, id: string) => void | Promise<void>;
    /** Each document that moved after the head, with its rebuilt value at the head. */
    onMovedDoc?: (key: Deno.KvKey, rebuilt: unknown) => void | Promise<void>;
    /** Called after a pass ("chain", "live"), for tests that change things between passes. */
    onPass?: (pass: "chain" | "live") => void | Promise<void>;
    onChainProblem?: (p: ChainProblem) => void | Promise<void>;
    onMismatch?: (m: ProjectionMismatch) => void | Promise<void>;
    /**
     * Runs the live pass elsewhere (another thread), started before the chain pass and run
     * alongside it: the digest of the live documents of `names` with `salt`, leaving out those
     * moved by events after `head` up to the position it returns as `seen` (a `LiveCut` of its
     * own). Replaces `onLiveDoc`.
     */
    liveElsewhere?: (req: { head: LogHead | null; names: string[]; salt: string }) => Promise<{
      digest: ProjectionDigest;
      strays: number;
      seen: number;
      /** Folds part of the log there too (`FoldRequest`); null when too many stay open. */
      fold?: (req: FoldRequest) => Promise<FoldResult | null>;
    }>;
    /**
     * Work for this thread once the chain pass is done (and `scratch` holds its folds) while the
     * live pass elsewhere is still going: given a promise that settles when it ends, it should
     * stop soon after (the fold waits for it).
     */
    meanwhile?: (liveEnded: Promise<void>) => Promise<void>;
  } = {},
): Promise<StreamingReplayReport> {
  const head = (await source.get<LogHead>(HEAD)).value;
  const names = projections.map((p) => p.name);
  const cache = { cacheSize: opts.cacheSize };
  const kept = new Set(opts.keepInScratch ?? []);
  const toScratch = opts.exact ? projections : projections.filter((p) => kept.has(p.name));
  const digested = projections.filter((p) => !toScratch.includes(p));
  const scratchFolds = [...toScratch, ...(opts.extra ?? [])];
  const folder = scratchFolds.length > 0
    ? new ProjectionFolder(scratch, scratchFolds, cache)
    : null;
  // Stop at the head read up front: a service still writing cannot move the goalposts mid-walk.
  const to = head?.position ?? 0;
  let lastTouch = opts.exact ? null : new LastTouch(digested, [], to);
  const events = (types?: ReadonlySet<string> | null) =>
    readLog(source, {
      head,
      to,
      batchSize: opts.batchSize,
      stats: opts.stats,
      types,
      file: opts.file,
    });

  const passesMs: StreamingReplayReport["passesMs"] = {};
  let passStart = performance.now();
  const passEnded = (pass: keyof StreamingReplayReport["passesMs"]) => {
    const now = performance.now();
    passesMs[pass] = now - passStart;
    passStart = now;
  };

  const salt = randomSalt();
  const elsewhere = lastTouch && opts.liveElsewhere
    ? opts.liveElsewhere({ head, names, salt })
    : null;
  // Awaited after the chain pass; a failure meanwhile must not count as unhandled.
  elsewhere?.catch(() => {});

  const verifier = new ChainVerifier();
  let reported = 0;
  for await (const batch of events()) {
    for (const r of batch) {
      verifier.checkRead(r);
      for (; reported < verifier.problems.length; reported++) {
        await opts.onChainProblem?.(verifier.problems[reported]);
      }
      lastTouch?.record(r.event);
      await folder?.apply(r.event);
      await opts.onEvent?.(r.event);
    }
  }
  lastTouch?.recorded();
  const chain = verifier.finish(head);
  await checkNothingAfter(source, head, chain);
  for (; reported < verifier.problems.length; reported++) {
    await opts.onChainProblem?.(verifier.problems[reported]);
  }
  await folder?.flush();
  passEnded("chain");

  // Past the head read up front the service may still be writing: those documents are settled
  // one by one against the log, never counted as mismatches for having moved (live-cut.ts).
  const cut = new LiveCut(source, projections, head);
  await opts.onPass?.("chain");

  if (lastTouch) {
    // The live side first: the documents that move while it is read are known by its end, and
    // the rebuilt side then holds those back instead of adding them.
    let live;
    let foldThere: ((req: FoldRequest) => Promise<FoldResult | null>) | undefined;
    if (elsewhere) {
      await opts.meanwhile?.(elsewhere.then(() => {}, () => {}));
      const done = await elsewhere;
      // The same moved documents as the other side's cut: the events after the head up to the
      // position it had polled when it finished.
      if (done.seen > cut.seen) await cut.poll(done.seen);
      live = done;
      foldThere = done.fold;
    } else live = await digestLiveProjections(source, names, salt, cut, opts.onLiveDoc);
    passEnded("live");
    await opts.onPass?.("live");
    const held = new Held(cut.moved);
    const rebuilt = await foldSplit(events, digested, lastTouch, salt, held, {
      to,
      hold: [...cut.moved.keys()],
      maxOpen: opts.maxOpen,
      foldThere,
    });
    lastTouch = null; // tens of MiB at a million documents (the folder let go of it too)
    // The kept projections were rebuilt into scratch in the first pass: digested from there.
    if (rebuilt) {
      await addStoredDocuments(scratch, toScratch.map((p) => p.name), rebuilt, held);
    }
    passEnded("fold");
    if (rebuilt && live.strays === 0 && rebuilt.equals(live.digest)) {
      const mismatches: ProjectionMismatch[] = [];
      // The documents moved while the live side was read, as they stand now: settling polls the
      // log further, and what later events touch was compared at the head like the rest (a
      // service that keeps writing must not keep this loop going).
      const moved = [...cut.moved];
      for (const [id, key] of moved) {
        await opts.onMovedDoc?.(key, held.docs.get(id) ?? null);
        const wrong = await cut.settle(key, held.docs.get(id) ?? null);
        if (!wrong) continue;
        const m = { key: id, live: wrong.live, rebuilt: wrong.expected };
        mismatches.push(m);
        await opts.onMismatch?.(m);
      }
      passEnded("settle");
      return {
        chain,
        documents: rebuilt.count + moved.length,
        mismatches: mismatches.slice(0, opts.maxMismatches ?? 1000),
        mismatchCount: mismatches.length,
        equal: chain.ok && mismatches.length === 0,
        compared: "digest",
        passesMs,
        moved: moved.length,
      };
    }
    // They differ, or too many documents stayed open: fold the rest into scratch too, to name
    // each mismatch.
    const again = new ProjectionFolder(scratch, digested, cache);
    for await (const batch of events()) for (const r of batch) await again.apply(r.event);
    await again.flush();
  }
  const cmp = await compareProjectionStores(source, scratch, names, {
    maxMismatches: opts.maxMismatches,
    onMismatch: opts.onMismatch,
    settle: async (m) => {
      await cut.poll();
      const key = cut.moved.get(m.key);
      if (!key) return m;
      const wrong = await cut.settle(key, m.rebuilt);
      return wrong ? { key: m.key, live: wrong.live, rebuilt: wrong.expected } : null;
    },
  });
  passEnded("documents");
  return {
    chain,
    documents: cmp.documents,
    mismatches: cmp.mismatches,
    mismatchCount: cmp.mismatchCount,
    equal: cmp.mismatchCount === 0 && chain.ok,
    compared: "documents",
    passesMs,
    moved: cut.moved.size,
  };
}

/**
 * Part of the fold for the other thread: the projections `lastTouch` holds (their last touches
 * handed over), up to position `to`, holding out the documents `hold` names (moved after the
 * head; their values come back in `held`).
 */
export interface FoldRequest {
  lastTouch: LastTouchPart[];
  to: number;
  hold: string[];
  maxOpen?: number;
}

export interface FoldResult {
  digest: ProjectionDigest;
  held: [string, unknown][];
}

/**
 * The share of the fold's work (`LastTouch.work`) handed to the other thread. Both threads read
 * the log again; this one writes the tables after its share, and the other's live pass ends about
 * when this thread's chain pass does: in the benchmark's mix at a million events half was the
 * fastest split measured (by touches: 0.5: 39 s, 0.7: 42 s, 0.85: 54 s; by work, 0.5 and 0.55
 * within the noise of each other).
 */
const FOLD_SHARE_ELSEWHERE = 0.5;

/**
 * The second pass of the digest replay, on this thread or split with the other one by projection
 * (each folds its own projections from the whole log, reading only the event types they fold;
 * digests add up). Null when too many documents stayed open at once on either side.
 */
async function foldSplit(
  events: (types: ReadonlySet<string> | null) => AsyncIterable<ReadEvent[]>,
  projections: Projection[],
  lastTouch: LastTouch,
  salt: string,
  held: Held,
  opts: {
    to: number;
    /** The ids `held` holds out, for the other thread. */
    hold: string[];
    maxOpen?: number;
    /** The other thread's fold; without it this thread folds everything. */
    foldThere?: (req: FoldRequest) => Promise<FoldResult | null>;
  },
): Promise<ProjectionDigest | null> {
  const away = opts.foldThere ? splitByWork(lastTouch.work, FOLD_SHARE_ELSEWHERE).there : [];
  if (away.length === 0) {
    return await foldIntoDigest(
      events(typesFolded(projections)),
      new DigestFolder(projections, lastTouch, salt, { maxOpen: opts.maxOpen, hold: held }),
    );
  }
  const there = opts.foldThere!({
    lastTouch: lastTouch.take(away),
    to: opts.to,
    hold: opts.hold,
    maxOpen: opts.maxOpen,
  });
  there.catch(() => {}); // awaited below; a failure meanwhile must not count as unhandled
  const mine = projections.filter((p) => !away.includes(p.name));
  const here = await foldIntoDigest(
    events(typesFolded(mine)),
    new DigestFolder(mine, lastTouch, salt, { maxOpen: opts.maxOpen, hold: held }),
  );
  const other = await there;
  if (!here || !other) return null;
  for (const [id, doc] of other.held) held.docs.set(id, doc);
  return here.plus(other.digest);
}

/** One thread's fold of the digest replay; null when too many documents stayed open at once. */
async function foldIntoDigest(
  events: AsyncIterable<ReadEvent[]>,
  folder: DigestFolder,
): Promise<ProjectionDigest | null> {
  for await (const batch of events) {
    for (const r of batch) if (!folder.apply(r.event)) return null;
  }
  return folder.finish();
}
