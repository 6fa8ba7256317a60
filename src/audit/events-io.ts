/**
 * The raw event log as NDJSON, one stored event per line, in log order: `events:export` writes
 * it, `events:import` rebuilds a fresh KV from it. Import checks the hash chain line by line and
 * refuses the whole file at the first broken link, leaving the target KV empty.
 */
import { SegmentWriter } from "../../events/bulk.ts";
import { HEAD, type LogHead } from "../../events/keys.ts";
import { readLog } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import type { Projection } from "../../events/projection.ts";
import { ChainVerifier } from "./log-chain.ts";
import { commitInBatches } from "./commit-batches.ts";
import { Fold, LastTouches, Touches } from "./fold.ts";
import { StateWriter } from "./state.ts";

/**
 * Streams the log up to the head read at the start, so a running service can keep writing.
 * Reads either layout (events/log.ts), so an old log exports for migration.
 */
export async function exportEvents(
  kv: Deno.Kv,
  write: (chunk: string) => Promise<void>,
  opts: { batchSize?: number } = {},
): Promise<{ events: number; head: LogHead | null }> {
  const head = (await kv.get<LogHead>(HEAD)).value;
  if (!head) return { events: 0, head: null };
  let events = 0;
  let chunk = "";
  for await (const batch of readLog(kv, { head, batchSize: opts.batchSize })) {
    for (const r of batch) {
      chunk += JSON.stringify(r.event) + "\n";
      events++;
    }
    // Fewer, larger writes; still bounded.
    if (chunk.length > 256 * 1024) {
      await write(chunk);
      chunk = "";
    }
  }
  if (chunk) await write(chunk);
  return { events, head };
}

export class ImportRefused extends Error {
  constructor(readonly line: number, readonly problem: string) {
    super(`line ${line}: ${problem}`);
  }
}

/** Longest line accepted; events are capped at 60 KiB by the store. */
export const MAX_LINE_BYTES = 1024 * 1024;

/** Splits a byte stream into lines without holding more than one line at a time. */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const bytes of stream) {
    buf += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
    }
    if (buf.length > MAX_LINE_BYTES) yield buf; // the caller refuses it by length
  }
  buf += decoder.decode();
  if (buf.length) yield buf;
}

const TYPE_FIELDS = ["type", "v", "at", "stream", "streamPosition", "position", "prevHash", "hash"];

function parseLine(text: string, line: number): StoredEvent {
  if (text.length > MAX_LINE_BYTES) throw new ImportRefused(line, "line is too long");
  let e: unknown;
  try {
    e = JSON.parse(text);
  } catch {
    throw new ImportRefused(line, "not valid JSON");
  }
  if (typeof e !== "object" || e === null || Array.isArray(e)) {
    throw new ImportRefused(line, "not a JSON object");
  }
  const missing = TYPE_FIELDS.filter((f) => !(f in e));
  if (missing.length || typeof (e as { data?: unknown }).data !== "object") {
    throw new ImportRefused(
      line,
      `not a stored event (missing ${[...missing, "data"].join(", ")})`,
    );
  }
  return e as StoredEvent;
}

export interface ImportResult {
  events: number;
  head: LogHead | null;
}

/**
 * Writes the events of `lines` into `target` (which must be empty), verifying the chain as it
 * goes, then re-derives the projections from them. Nothing is left behind on refusal.
 */
export async function importEvents(
  lines: AsyncIterable<string> | Iterable<string>,
  target: Deno.Kv,
  opts: {
    projections?: Projection[];
    /**
     * The hash of the head the export printed. A file cut short, or rewritten and hashed again,
     * is still a valid chain; only a head kept apart from the file tells.
     */
    expectHead?: string;
  } = {},
): Promise<ImportResult> {
  for await (const _ of target.list({ prefix: [] }, { limit: 1 })) {
    throw new Error("the target KV is not empty; import only into a fresh KV");
  }
  const verifier = new ChainVerifier();
  let line = 0;
  const log = new SegmentWriter();
  let pending: { key: Deno.KvKey; value: unknown }[] = [];
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() === "") continue;
      const e = parseLine(text, line);
      verifier.checkRead({ event: e, body: null });
      if (verifier.problems.length) throw new ImportRefused(line, verifier.problems[0].problem);
      pending.push(...log.add(e));
      if (pending.length >= 300) {
        await commitInBatches(target, pending);
        pending = [];
      }
    }
    pending.push(...log.finish());
    await commitInBatches(target, pending);
    const head = log.head();
    if (opts.expectHead !== undefined && head?.hash !== opts.expectHead) {
      throw new ImportRefused(
        line,
        `the last event's hash is ${head?.hash ?? "(no events)"}, not the expected head ` +
          `${opts.expectHead}: the file was cut short or rewritten`,
      );
    }
    await deriveProjections(target, head, opts.projections ?? allProjections);
    // The head goes last: until it is there, the KV is not a usable store.
    if (head) await target.set(HEAD, head);
    return { events: verifier.count, head };
  } catch (e) {
    await wipe(target);
    throw e;
  }
}

/**
 * The projections of the log just written, each document written once, at its last event (the
 * audit's fold: a first pass finds where that is).
 */
async function deriveProjections(kv: Deno.Kv, head: LogHead | null, projections: Projection[]) {
  const touches = new Touches(projections);
  const last = new LastTouches();
  for await (const batch of readLog(kv, { head })) {
    for (const { event } of batch) last.note(touches.ofOrNone(event), event.position);
  }
  const writer = new StateWriter(kv);
  const fold = new Fold(touches, async (d) => {
    if (d.doc !== null) await writer.put(d.key, d.doc);
  }, { last });
  for await (const batch of readLog(kv, { head })) {
    for (const { event } of batch) await fold.apply(event);
  }
  await fold.finish();
  await writer.flush();
}

async function wipe(kv: Deno.Kv): Promise<void> {
  let keys: Deno.KvKey[] = [];
  for await (const entry of kv.list({ prefix: [] }, { batchSize: 500 })) {
    keys.push(entry.key);
    if (keys.length === 500) {
      await commitInBatches(kv, keys.map((key) => ({ key, value: null })));
      keys = [];
    }
  }
  await commitInBatches(kv, keys.map((key) => ({ key, value: null })));
}
