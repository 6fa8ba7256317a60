/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker side of live-worker.ts: one live pass, or one part of the fold (a fresh worker each);
 * it is terminated after it.
 */
import { allProjections } from "../../projections/index.ts";
import { digestLiveProjections, Held, ProjectionDigest } from "../../projections/doc-digest.ts";
import { digestLiveFile } from "../../projections/live-file.ts";
import { KvFile } from "../../events/kv-file.ts";
import { DigestFolder, LastTouch } from "../../projections/digest-fold.ts";
import { readLog } from "../../events/log.ts";
import { LiveCut } from "../../projections/live-cut.ts";
import { typesFolded } from "../../projections/touches.ts";
import { ChunkFile, DocChunkWriter, type Write } from "./doc-chunks.ts";
import type { FoldRequest } from "../../projections/replay.ts";
import type { LiveRequest } from "./live-worker.ts";
import { announceReady } from "./worker.ts";

/**
 * Batches sent and not yet committed by the main thread. The main thread answers between slices
 * of its own work, so waiting for each answer left this thread idle more than busy. Chunks that
 * go into the KV (40 of 16 KiB a batch) keep a window of a few batches, a few MiB of memory; when
 * they go to a file, a batch is only index entries (about 40,000 in all at a million events, a
 * few MiB), and waiting for the main thread's answers held this pass to its pace: no window then.
 */
const CHUNKS_WINDOW = 8;
let window = CHUNKS_WINDOW;
let inFlight = 0;
let room: (() => void) | null = null;

/** Sends a batch to the main thread; resolves once fewer than `window` batches are uncommitted. */
async function send(writes: Write[]): Promise<void> {
  const transfer = writes.flatMap((w) => w.value instanceof Uint8Array ? [w.value.buffer] : []);
  self.postMessage({ type: "writes", writes }, transfer as ArrayBuffer[]);
  inFlight++;
  while (inFlight >= window) await new Promise<void>((resolve) => (room = resolve));
}

/** Resolves when every batch sent has been committed. */
async function drained(): Promise<void> {
  while (inFlight > 0) await new Promise<void>((resolve) => (room = resolve));
}

async function run(req: LiveRequest): Promise<void> {
  const kv = await Deno.openKv(req.path);
  let file: ChunkFile | null = null;
  try {
    const wanted = new Set(req.names);
    const cut = new LiveCut(kv, allProjections.filter((p) => wanted.has(p.name)), req.head);
    file = req.pack && req.docsPath ? await ChunkFile.open(req.docsPath, { fresh: true }) : null;
    window = file ? Infinity : CHUNKS_WINDOW;
    const docs = req.pack ? new DocChunkWriter(send, file) : null;
    // Straight from the file's rows when it is a KV file this can read (live-file.ts).
    const raw = KvFile.open(req.path);
    const live = raw
      ? await digestLiveFile(
        raw,
        req.names,
        new ProjectionDigest(req.salt),
        cut,
        docs ? (line, idEnd, keyOf) => docs.addLine(line, idEnd, keyOf) : undefined,
      ).finally(() => raw.close())
      : await digestLiveProjections(
        kv,
        req.names,
        req.salt,
        cut,
        docs ? (key, text, id) => docs.add(key, text, id) : undefined,
      );
    await docs?.finish();
    // Every chunk's bytes in the file before the answer: the worker is ended once it is sent.
    file?.close();
    file = null;
    await drained();
    self.postMessage({
      type: "done",
      sum: live.digest.sum,
      count: live.digest.count,
      strays: live.strays,
      seen: cut.seen,
    });
  } finally {
    file?.close();
    kv.close();
  }
}

/** Folds the projections the main thread handed over, with the same salt and held documents. */
async function fold(req: FoldRequest & { live: LiveRequest }): Promise<void> {
  const live = req.live;
  const byName = new Map(allProjections.map((p) => [p.name, p]));
  const projections = req.lastTouch.map((part) => {
    const p = byName.get(part.name);
    if (!p) throw new Error(`no projection ${part.name} to fold`);
    return p;
  });
  const held = new Held(new Set(req.hold));
  const folder = new DigestFolder(
    projections,
    new LastTouch(projections, req.lastTouch),
    live.salt,
    {
      maxOpen: req.maxOpen,
      hold: held,
    },
  );
  const kv = await Deno.openKv(live.path);
  const file = KvFile.open(live.path);
  try {
    const types = typesFolded(projections);
    for await (const batch of readLog(kv, { head: live.head, to: req.to, types, file })) {
      for (const r of batch) {
        if (!folder.apply(r.event)) {
          self.postMessage({ type: "fold-open" });
          return;
        }
      }
    }
  } finally {
    file?.close();
    kv.close();
  }
  const digest = folder.finish();
  self.postMessage({ type: "folded", sum: digest.sum, count: digest.count, held: [...held.docs] });
}

self.onmessage = (
  m: MessageEvent<
    LiveRequest | { type: "ack" } | ({ type: "fold"; live: LiveRequest } & FoldRequest)
  >,
) => {
  if ("type" in m.data && m.data.type === "fold") {
    fold(m.data).catch((e) => self.postMessage({ type: "error", message: String(e?.stack ?? e) }));
    return;
  }
  if ("type" in m.data) {
    inFlight--;
    const r = room;
    room = null;
    r?.();
    return;
  }
  run(m.data).catch((e) => self.postMessage({ type: "error", message: String(e?.stack ?? e) }));
};
announceReady();
