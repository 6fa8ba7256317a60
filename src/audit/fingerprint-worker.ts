/**
 * The incremental audit's prefix proof (the fingerprint of the sealed segments up to the
 * checkpoint: events/log.ts, `SegmentFingerprint`) on the machine's other core, while the main
 * thread audits what came after. Deno KV returns a segment's value with its versionstamp, so the
 * proof reads every sealed segment, ~800 MB at a million events (reading only the versions with
 * SQLite directly costs the same: they are stored after the values); it is the one part of an
 * incremental audit that grows with the whole log, and nothing else waits for it.
 *
 * The worker opens the audited KV itself (a file path; a KV handle cannot cross threads) and only
 * reads it.
 */
import { SegmentFingerprint } from "../../events/log.ts";

export interface FingerprintRequest {
  path: string;
  through: number;
}

type FromWorker =
  | { type: "done"; through: number; count: number; digest: string; reads: number }
  | { type: "error"; message: string };

/** `SegmentFingerprint.of(kv at path, through)`, computed in a worker. */
export function fingerprintInWorker(
  req: FingerprintRequest,
): Promise<{ fingerprint: SegmentFingerprint; reads: number }> {
  const worker = new Worker(new URL("./fingerprint-worker-main.ts", import.meta.url), {
    type: "module",
  });
  return new Promise((resolve, reject) => {
    const fail = (e: unknown) => {
      worker.terminate();
      reject(e instanceof Error ? e : new Error(String(e)));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      fail(new Error(`fingerprint worker: ${e.message}`));
    };
    worker.onmessage = (m: MessageEvent<FromWorker>) => {
      const msg = m.data;
      if (msg.type === "done") {
        worker.terminate();
        resolve({
          fingerprint: new SegmentFingerprint(msg.through, msg.count, msg.digest),
          reads: msg.reads,
        });
      } else fail(new Error(`fingerprint worker: ${msg.message}`));
    };
    worker.postMessage(req);
  });
}
