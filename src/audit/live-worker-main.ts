/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker side of live-worker.ts: one live pass, then it reports and is terminated.
 */
import { allProjections } from "../../projections/index.ts";
import { digestLiveProjections } from "../../projections/doc-digest.ts";
import { LiveCut } from "../../projections/live-cut.ts";
import { DocChunkWriter, type Write } from "./doc-chunks.ts";
import type { LiveRequest } from "./live-worker.ts";

let acked: (() => void) | null = null;

/** Sends a batch to the main thread and resolves when it is committed there. */
function send(writes: Write[]): Promise<void> {
  const transfer = writes.flatMap((w) => w.value instanceof Uint8Array ? [w.value.buffer] : []);
  return new Promise<void>((resolve) => {
    acked = resolve;
    self.postMessage({ type: "writes", writes }, transfer as ArrayBuffer[]);
  });
}

async function run(req: LiveRequest): Promise<void> {
  const kv = await Deno.openKv(req.path);
  try {
    const wanted = new Set(req.names);
    const cut = new LiveCut(kv, allProjections.filter((p) => wanted.has(p.name)), req.head);
    const docs = req.pack ? new DocChunkWriter(send) : null;
    const live = await digestLiveProjections(
      kv,
      req.names,
      req.salt,
      cut,
      docs ? (key, text, id) => docs.add(key, text, id) : undefined,
    );
    await docs?.finish();
    self.postMessage({
      type: "done",
      sum: live.digest.sum,
      count: live.digest.count,
      strays: live.strays,
      seen: cut.seen,
    });
  } finally {
    kv.close();
  }
}

self.onmessage = (m: MessageEvent<LiveRequest | { type: "ack" }>) => {
  if ("type" in m.data) {
    const a = acked;
    acked = null;
    a?.();
    return;
  }
  run(m.data).catch((e) => self.postMessage({ type: "error", message: String(e?.stack ?? e) }));
};
