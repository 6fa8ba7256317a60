/**
 * The incremental audit's prefix proof (the fingerprint of the sealed segments up to the
 * checkpoint: events/log.ts, `SegmentFingerprint`) on the machine's other core, while the main
 * thread audits what came after. Deno KV returns a segment's value with its versionstamp, so
 * through `Deno.Kv` the proof reads every sealed segment, ~800 MB at a million events; from a KV
 * file it reads only keys and versions (kv-file.ts, ~0.3 s). It is the one part of an
 * incremental audit that grows with the whole log, and nothing else waits for it.
 *
 * The worker opens the audited KV itself (a file path; a KV handle cannot cross threads) and only
 * reads it.
 */
import { SegmentFingerprint } from "../../events/log.ts";
import { askOnce } from "./worker.ts";

export interface FingerprintRequest {
  path: string;
  through: number;
}

type Done = { type: "done"; through: number; count: number; digest: string; reads: number };

/** `SegmentFingerprint.of(kv at path, through)`, computed in a worker. */
export async function fingerprintInWorker(
  req: FingerprintRequest,
): Promise<{ fingerprint: SegmentFingerprint; reads: number }> {
  const msg = await askOnce<Done>(
    new URL("./fingerprint-worker-main.ts", import.meta.url),
    "fingerprint worker",
    req,
  );
  return {
    fingerprint: new SegmentFingerprint(msg.through, msg.count, msg.digest),
    reads: msg.reads,
  };
}
