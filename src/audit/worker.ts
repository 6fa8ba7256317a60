/**
 * The audit's workers (the live pass and fold, live-worker.ts; the prefix proof,
 * fingerprint-worker.ts) seen from the main thread: one answer awaited at a time, any failure of
 * the worker rejecting it, and the state writes a worker sends (`writes`) committed here, one batch
 * at a time in the order sent, each acknowledged (the state KV has one writer, this thread).
 * Messages wait until the worker says it is ready: a message that arrives while its module is
 * still loading finds no handler and is lost.
 */
import { commitInBatches } from "../../projections/commit-batches.ts";
import type { Write } from "./doc-chunks.ts";

type Message = { type: string };

/** What a worker posts once its handler is in place (`announceReady`). */
export const WORKER_READY = "ready";

/** Called by a worker's entry module last, after setting its `onmessage`. */
export function announceReady(): void {
  (self as unknown as { postMessage(m: unknown): void }).postMessage({ type: WORKER_READY });
}

export function spawnWorker<M extends Message>(url: URL, name: string, state?: Deno.Kv | null) {
  const worker = new Worker(url, { type: "module" });
  let ended = false;
  let waiting: { resolve: (m: M) => void; reject: (e: Error) => void } | null = null;
  // An answer still awaited when the worker is ended will not come.
  const end = () => {
    if (!ended) worker.terminate();
    ended = true;
    const w = waiting;
    waiting = null;
    w?.reject(new Error(`${name} has ended`));
  };
  const next = () =>
    new Promise<M>((resolve, reject) => {
      if (ended) reject(new Error(`${name} has ended`));
      else waiting = { resolve, reject };
    });
  const fail = (e: unknown) => {
    const w = waiting;
    waiting = null;
    end();
    w?.reject(e instanceof Error ? e : new Error(String(e)));
  };
  let committing: Promise<void> = Promise.resolve();
  worker.onerror = (e) => {
    e.preventDefault();
    fail(new Error(`${name}: ${e.message}`));
  };
  let ready = false;
  const queued: [unknown, ArrayBuffer[]][] = [];
  worker.onmessage = (m: MessageEvent<M | { type: "writes"; writes: Write[] }>) => {
    const msg = m.data;
    if (msg.type === WORKER_READY) {
      ready = true;
      for (const [data, transfer] of queued.splice(0)) worker.postMessage(data, transfer);
    } else if (msg.type === "writes") {
      if (!state) return fail(new Error(`${name} sent writes with nowhere to put them`));
      const { writes } = msg as { writes: Write[] };
      committing = committing.then(() => commitInBatches(state, writes)).then(
        () => worker.postMessage({ type: "ack" }),
        fail,
      );
    } else if (msg.type === "error") {
      fail(new Error(`${name}: ${(msg as { message?: string }).message}`));
    } else {
      const w = waiting;
      waiting = null;
      w?.resolve(msg as M);
    }
  };
  const post = (msg: unknown, transfer: ArrayBuffer[] = []) => {
    if (ready) worker.postMessage(msg, transfer);
    else queued.push([msg, transfer]);
  };
  return { post, next, end };
}

/**
 * One request to a fresh worker and its one answer: the message of type "done" it posts, or the
 * error it reports. The worker is ended either way, or when `signal` aborts.
 */
export async function askOnce<D extends { type: "done" }>(
  url: URL,
  name: string,
  req: unknown,
  /** Ends the worker before it answers (the caller gave up on the answer). */
  signal?: AbortSignal,
): Promise<D> {
  const w = spawnWorker<D | { type: "error"; message: string }>(url, name);
  const answer = w.next();
  const stop = () => w.end();
  signal?.addEventListener("abort", stop);
  w.post(req);
  try {
    const msg = await answer;
    if (msg.type !== "done") throw new Error(`${name} answered ${msg.type}`);
    return msg as D;
  } finally {
    signal?.removeEventListener("abort", stop);
    w.end();
  }
}
