/**
 * Reads the log in order, whichever layout holds it: sealed segments then the tail (the layout
 * the store writes, events/codec.ts), or one entry per event (the first layout, kept readable so
 * an old log can be exported and migrated).
 *
 * Reading follows the storage slots, never the positions the bodies claim, so a tampered body
 * cannot steer the reader; the chain check compares the two. A seal that moves tail lines into a
 * segment while we read is noticed (the tail then starts past where we are) and the segments are
 * read again from there; an event that is really gone is skipped, and the chain check reports it.
 */
import { GENESIS_HASH } from "./hash.ts";
import { readAhead } from "./read-ahead.ts";
import { decodeSegment, decodeTail, type LogRecord, recordEvent, storedType } from "./codec.ts";
import {
  eventKey,
  HEAD,
  LOG,
  LOG_LAYOUT,
  LOG_SEGMENTS,
  LOG_TAIL,
  type LogHead,
  segmentKey,
  tailKey,
} from "./keys.ts";
import type { StoredEvent } from "./types.ts";

/** An event as read, with its stored body text (null on the first layout: not stored as text). */
export interface ReadEvent {
  event: StoredEvent;
  body: string | null;
}

/** KV entries read, for the benchmark's "KV reads per 1,000 events". */
export interface ReadStats {
  reads: number;
}

export class LegacyLayoutError extends Error {
  constructor() {
    super(
      "this KV holds an event log in the first layout (one entry per event): migrate it with " +
        "events:export and events:import (docs/operations.md) before the service writes to it",
    );
  }
}

/** A log written by the first store: events but no layout mark on the head. */
export const isLegacy = (head: LogHead | null): boolean =>
  !!head && head.position > 0 && head.layout !== LOG_LAYOUT;

export async function readHead(kv: Deno.Kv): Promise<LogHead | null> {
  return (await kv.get<LogHead>(HEAD)).value;
}

export interface ReadOptions {
  /** First position to read (default 1). */
  from?: number;
  /** Last position to read, inclusive (default: the head read now). */
  to?: number;
  /** The hash of the event at `from - 1` when the caller knows it (saves a read). */
  prevHash?: string;
  /** The head, when the caller already read it. */
  head?: LogHead | null;
  /**
   * Events per batch handed out (default 100). A batch lives until the reader is done with it, and
   * young collections copy what is alive: at 500 a third of the first pass's new space survived
   * each one (1.7 GB copied at a million events), at 80 under half as much.
   */
  batchSize?: number;
  /**
   * Only events of these types are wanted: the others may be left out (in the current layout,
   * told by `storedType` and never parsed), which loses nothing for a fold that reaches none of
   * them. A body whose type cannot be read that way is parsed and handed out.
   */
  types?: ReadonlySet<string> | null;
  stats?: ReadStats;
}

/** The log from `from` to `to` in batches, in order. */
export async function* readLog(
  kv: Deno.Kv,
  opts: ReadOptions = {},
): AsyncGenerator<ReadEvent[]> {
  const stats = opts.stats ?? { reads: 0 };
  const head = opts.head !== undefined ? opts.head : (stats.reads++, await readHead(kv));
  const to = opts.to ?? head?.position ?? 0;
  const from = Math.max(1, opts.from ?? 1);
  const size = opts.batchSize ?? 100;
  if (from > to) return;
  if (isLegacy(head)) {
    let batch: ReadEvent[] = [];
    const iter = kv.list<StoredEvent>(
      { start: eventKey(from), end: eventKey(to + 1) },
      { batchSize: Math.max(size, 100) },
    );
    for await (const e of iter) {
      stats.reads++;
      batch.push({ event: e.value, body: null });
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length) yield batch;
    return;
  }

  let prev = opts.prevHash ?? (from === 1 ? GENESIS_HASH : await hashAt(kv, from - 1, stats));
  let next = from;
  let batch: ReadEvent[] = [];
  const types = opts.types ?? null;
  const take = (r: LogRecord) => {
    const type = types ? storedType(r.body) : null;
    if (type === null || !types || types.has(type)) {
      batch.push({ event: recordEvent(r, prev), body: r.body });
    }
    prev = r.hash;
    next = r.slot + 1;
  };
  while (next <= to) {
    const roundStart = next;
    // Sealed segments holding `next` or later.
    // Read ahead (a page of 16 segments, 1 MiB, while the last is worked on): at most one page
    // read past `to`, and the memory held outside the heap stays small.
    const segments = readAhead(
      kv.list<Uint8Array>({ prefix: LOG_SEGMENTS, start: segmentKey(next) }, { batchSize: 16 }),
      16,
    );
    for await (const s of segments) {
      stats.reads++;
      for (const r of decodeSegment(s.value)) {
        if (r.slot < next) continue;
        if (r.slot > to) break;
        take(r);
      }
      // Its text is decoded: the bytes go now, not at the next full garbage collection.
      releaseBytes(s.value);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
      if (next > to || (s.key[LOG_SEGMENTS.length] as number) >= to) break;
    }
    if (next > to) break;
    // Then the tail, as long as it carries on from `next`.
    let gapAt: number | null = null;
    const tail = kv.list<Uint8Array>(
      { start: tailKey(next), end: tailKey(to + 1) },
      { batchSize: Math.max(size, 100) },
    );
    for await (const t of tail) {
      stats.reads++;
      const slot = t.key[LOG_TAIL.length] as number;
      if (slot !== next) {
        gapAt = slot;
        break;
      }
      take(decodeTail(slot, t.value));
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (next > to) break;
    if (next > roundStart) continue; // perhaps sealed meanwhile: look in the segments again
    if (gapAt === null) break; // nothing more: the chain check compares with the head
    next = gapAt; // really missing: carry on after the gap, the chain check reports it
  }
  if (batch.length) yield batch;
}

/** Every event from `from`, one at a time (a convenience over `readLog`). */
export async function* readEvents(
  kv: Deno.Kv,
  opts: ReadOptions = {},
): AsyncGenerator<StoredEvent> {
  for await (const batch of readLog(kv, opts)) for (const r of batch) yield r.event;
}

/** The stored hash of the event at `position`, or the genesis hash before the first. */
export async function hashAt(
  kv: Deno.Kv,
  position: number,
  stats: ReadStats = { reads: 0 },
): Promise<string> {
  if (position <= 0) return GENESIS_HASH;
  const r = await recordAt(kv, position, stats);
  return r?.hash ?? "";
}

/** The record stored at `position` (tail first, then the segment holding it). */
export async function recordAt(
  kv: Deno.Kv,
  position: number,
  stats: ReadStats = { reads: 0 },
): Promise<LogRecord | null> {
  stats.reads++;
  const t = await kv.get<Uint8Array>(tailKey(position));
  if (t.value !== null) return decodeTail(position, t.value);
  const segs = kv.list<Uint8Array>({ prefix: LOG_SEGMENTS, start: segmentKey(position) }, {
    limit: 1,
  });
  for await (const s of segs) {
    stats.reads++;
    return decodeSegment(s.value).find((r) => r.slot === position) ?? null;
  }
  return null;
}

/** The stored events at `positions` (any order; missing ones left out), each read once. */
export async function eventsAt(kv: Deno.Kv, positions: number[]): Promise<StoredEvent[]> {
  const head = await readHead(kv);
  if (isLegacy(head)) {
    const out: StoredEvent[] = [];
    for (let i = 0; i < positions.length; i += 10) {
      const entries = await kv.getMany<StoredEvent[]>(positions.slice(i, i + 10).map(eventKey));
      for (const e of entries) if (e.value) out.push(e.value as unknown as StoredEvent);
    }
    return out;
  }
  const wanted = [...positions].sort((a, b) => a - b);
  const found = new Map<number, LogRecord>();
  const sealed = head?.sealed ?? 0;
  const inTail = wanted.filter((p) => p > sealed);
  for (let i = 0; i < inTail.length; i += 10) {
    const entries = await kv.getMany<Uint8Array[]>(inTail.slice(i, i + 10).map(tailKey));
    entries.forEach((e, j) => {
      if (e.value !== null) found.set(inTail[i + j], decodeTail(inTail[i + j], e.value));
    });
  }
  // The rest (sealed, or sealed since the head was read): from the segments holding them.
  for (const p of wanted) {
    if (found.has(p)) continue;
    const r = await recordAt(kv, p);
    if (!r) continue;
    found.set(p, r);
    // Its neighbours in the same segment are likely wanted too: recordAt decoded it anyway.
  }
  const out: StoredEvent[] = [];
  for (const p of positions) {
    const r = found.get(p);
    if (r) out.push(recordEvent(r, found.get(p - 1)?.hash ?? await hashAt(kv, p - 1)));
  }
  return out;
}

/**
 * True when records are stored past `position`: the store writes no event without moving the
 * head, so with an unchanged head these were put there by something else.
 */
export async function recordsAfter(kv: Deno.Kv, position: number, legacy: boolean) {
  const probes: Deno.KvListSelector[] = legacy
    ? [{ prefix: LOG, start: eventKey(position + 1) }]
    : [
      { prefix: LOG_TAIL, start: tailKey(position + 1) },
      { prefix: LOG_SEGMENTS, start: segmentKey(position + 1) },
    ];
  for (const selector of probes) {
    for await (const e of kv.list(selector, { limit: 1 })) {
      const key = e.key[e.key.length - 1];
      return typeof key === "number" ? key : position + 1;
    }
  }
  return null;
}

/**
 * Frees a value read from KV now, by detaching its buffer, when the value is the whole of it (a
 * view into a larger buffer is left alone). Segments are 63 KiB each; left to the garbage
 * collector, a long read piles them up outside the V8 heap before it runs, and the ones a
 * read-ahead kept long enough to be promoted bring V8's next full collection sooner.
 */
export function releaseBytes(value: unknown): void {
  if (!(value instanceof Uint8Array)) return; // a tampered segment: nothing to free early
  const bytes = value.buffer;
  if (
    bytes instanceof ArrayBuffer && !bytes.detached && value.byteOffset === 0 &&
    value.byteLength === bytes.byteLength
  ) bytes.transfer(0);
}
