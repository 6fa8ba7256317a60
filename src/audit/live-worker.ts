/**
 * The full audit's live pass (read every live projection document, digest it, pack it into the
 * audit's state) on the machine's other core, while the main thread verifies the chain and folds.
 * The two passes are independent: the live side only needs the head the audit starts from
 * (live-cut.ts explains why documents moved past it are left out and settled apart).
 *
 * The worker opens the audited KV itself (a file path; a KV handle cannot cross threads) and only
 * reads it. The state KV stays with the main thread: the worker sends each batch of packed chunks
 * (transferred, not copied) and waits for it to be committed before sending the next, so at most
 * two batches are in memory and the state has a single writer.
 */
import type { LogHead } from "../../events/keys.ts";
import { ProjectionDigest } from "../../projections/doc-digest.ts";
import { commitInBatches } from "../../projections/replay.ts";
import type { Write } from "./doc-chunks.ts";

export interface LiveRequest {
  /** The audited KV's file path. */
  path: string;
  names: string[];
  salt: string;
  head: LogHead | null;
  /** Pack the documents into this state KV (the incremental audit's starting point). */
  pack: boolean;
}

export interface LiveResult {
  digest: ProjectionDigest;
  strays: number;
  /** The last log position the worker's cut polled: its moved documents are those up to it. */
  seen: number;
}

type FromWorker =
  | { type: "writes"; writes: Write[] }
  | { type: "done"; sum: number[]; count: number; strays: number; seen: number }
  | { type: "error"; message: string };

/** Runs the live pass in a worker; `state` receives the packed documents when `req.pack`. */
export function liveInWorker(req: LiveRequest, state: Deno.Kv | null): Promise<LiveResult> {
  const worker = new Worker(new URL("./live-worker-main.ts", import.meta.url), {
    type: "module",
  });
  return new Promise<LiveResult>((resolve, reject) => {
    const fail = (e: unknown) => {
      worker.terminate();
      reject(e instanceof Error ? e : new Error(String(e)));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      fail(new Error(`live pass worker: ${e.message}`));
    };
    worker.onmessage = (m: MessageEvent<FromWorker>) => {
      const msg = m.data;
      if (msg.type === "writes") {
        if (!state) return fail(new Error("live pass worker sent writes with nowhere to put them"));
        commitInBatches(state, msg.writes).then(() => worker.postMessage({ type: "ack" }), fail);
      } else if (msg.type === "done") {
        worker.terminate();
        resolve({
          digest: ProjectionDigest.of(req.salt, msg.sum, msg.count),
          strays: msg.strays,
          seen: msg.seen,
        });
      } else fail(new Error(`live pass worker: ${msg.message}`));
    };
    worker.postMessage(req);
  });
}
