/**
 * The full audit's second thread. It runs the live pass (read every live projection document,
 * digest it, pack it into the audit's state) while the main thread verifies the chain, then, if
 * asked, folds part of the log into a digest while the main thread folds the rest: without that
 * second job it sat idle through the fold, which is the longest part of an audit.
 * The live pass needs only the head the audit starts from (live-cut.ts explains why documents
 * moved past it are left out and settled apart); the fold needs the last touches the main
 * thread's chain pass recorded for the projections it hands over (sent, not copied).
 *
 * The worker opens the audited KV itself (a file path; a KV handle cannot cross threads) and only
 * reads it. The state KV stays with the main thread: the worker sends each batch of packed chunks
 * (transferred, not copied) and keeps at most a few uncommitted (live-worker-main.ts), so memory
 * stays at a few MiB and the state has a single writer.
 */
import type { LogHead } from "../../events/keys.ts";
import { ProjectionDigest } from "../../projections/doc-digest.ts";
import type { FoldRequest, FoldResult } from "../../projections/replay.ts";
import type { Write } from "./doc-chunks.ts";
import { spawnWorker } from "./worker.ts";

export interface LiveRequest {
  /** The audited KV's file path. */
  path: string;
  names: string[];
  salt: string;
  head: LogHead | null;
  /** Pack the documents into this state KV (the incremental audit's starting point). */
  pack: boolean;
  /** Where the packed chunks' bytes go (started empty); null: into the state KV. */
  docsPath?: string | null;
}

export interface LiveResult {
  digest: ProjectionDigest;
  strays: number;
  /** The last log position the worker's cut polled: its moved documents are those up to it. */
  seen: number;
  /** Folds on the worker (at most once); null when too many documents stayed open at once. */
  fold(req: FoldRequest): Promise<FoldResult | null>;
}

const LIVE_WORKER = new URL("./live-worker-main.ts", import.meta.url);

type FromWorker =
  | { type: "writes"; writes: Write[] }
  | { type: "done"; sum: number[]; count: number; strays: number; seen: number }
  | { type: "folded"; sum: number[]; count: number; held: [string, unknown][] }
  | { type: "fold-open" }
  | { type: "error"; message: string };

/**
 * Runs the live pass in a worker; `state` receives the packed documents when `req.pack`. The fold
 * runs in a fresh worker: the live pass's heap is let go with its worker rather than carried into
 * the fold, where both threads hold their folds at once (the audit's peak memory).
 */
export function liveInWorker(req: LiveRequest, state: Deno.Kv | null): Promise<LiveResult> {
  const w = spawnWorker<FromWorker>(LIVE_WORKER, "live pass worker", state);
  const live = w.next();
  w.post(req);
  return live.then((msg) => {
    w.end();
    if (msg.type !== "done") throw new Error(`live pass worker answered ${msg.type}`);
    return {
      digest: ProjectionDigest.of(req.salt, msg.sum, msg.count),
      strays: msg.strays,
      seen: msg.seen,
      fold: async (fold: FoldRequest) => {
        const f = spawnWorker<FromWorker>(LIVE_WORKER, "fold worker");
        const answer = f.next();
        const transfer = fold.lastTouch.flatMap((p) => [p.fingerprints.buffer, p.values.buffer]);
        f.post({ type: "fold", live: req, ...fold }, transfer as ArrayBuffer[]);
        try {
          const done = await answer;
          if (done.type === "fold-open") return null;
          if (done.type !== "folded") throw new Error(`fold worker answered ${done.type}`);
          return { digest: ProjectionDigest.of(req.salt, done.sum, done.count), held: done.held };
        } finally {
          f.end();
        }
      },
    };
  }).catch((e) => {
    w.end();
    throw e;
  });
}
