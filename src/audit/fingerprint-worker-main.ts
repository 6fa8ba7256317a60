/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker side of fingerprint-worker.ts: one fingerprint, then it reports and is terminated.
 */
import { SegmentFingerprint } from "../../events/log.ts";
import { LOG_SEGMENTS } from "../../events/keys.ts";
import { KvFile } from "../../events/kv-file.ts";
import { decodeKvKey, encodeKvKey } from "../../events/kv-key-codec.ts";
import type { FingerprintRequest } from "./fingerprint-worker.ts";
import { announceReady } from "./worker.ts";

/**
 * The fingerprint from the file's rows (kv-file.ts): keys and versionstamps only. Null when the
 * file is not one `KvFile` reads.
 */
function fromFile(path: string, through: number, stats: { reads: number }) {
  const file = KvFile.open(path);
  if (!file) return null;
  try {
    const f = new SegmentFingerprint();
    if (through <= 0) return f;
    for (const page of file.versionstamps(encodeKvKey(LOG_SEGMENTS))) {
      for (const [key, versionstamp] of page) {
        const last = decodeKvKey(key)?.[LOG_SEGMENTS.length];
        if (typeof last !== "number") throw new Error("a log segment key that is not a position");
        if (last > through) return f;
        stats.reads++;
        f.add(last, versionstamp);
      }
    }
    return f;
  } finally {
    file.close();
  }
}

async function run(req: FingerprintRequest): Promise<void> {
  const kv = await Deno.openKv(req.path);
  try {
    const stats = { reads: 0 };
    // Segments are up to 64 KiB: a few at a time keeps this thread's memory small.
    const f = fromFile(req.path, req.through, stats) ??
      await SegmentFingerprint.of(kv, req.through, stats, 8);
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
