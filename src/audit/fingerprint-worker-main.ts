/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker side of fingerprint-worker.ts: one fingerprint, then it reports and is terminated.
 */
import { SegmentFingerprint } from "../../events/log.ts";
import type { FingerprintRequest } from "./fingerprint-worker.ts";
import { announceReady } from "./worker.ts";

async function run(req: FingerprintRequest): Promise<void> {
  const kv = await Deno.openKv(req.path);
  try {
    const stats = { reads: 0 };
    // Segments are up to 64 KiB: a few at a time keeps this thread's memory small.
    const f = await SegmentFingerprint.of(kv, req.through, stats, 8);
    self.postMessage({
      type: "done",
      through: f.through,
      count: f.count,
      digest: f.digest,
      reads: stats.reads,
    });
  } finally {
    kv.close();
  }
}

self.onmessage = (m: MessageEvent<FingerprintRequest>) => {
  run(m.data).catch((e) => self.postMessage({ type: "error", message: String(e?.stack ?? e) }));
};
announceReady();
