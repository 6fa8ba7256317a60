/**
 * How an event is stored: one line of UTF-8 text, `<hash>\t<body>`, where `<body>` is the
 * canonical JSON of the event without its hash and its `prevHash` (the exact text the hash chain
 * hashes, events/hash.ts) and `<hash>` is the event's SHA-256 in hex.
 *
 * Why each part is there:
 * - the body is stored as the very bytes that are hashed, so verifying the chain is one SHA-256
 *   over stored bytes, with no re-serialisation, and decoding is one `JSON.parse`;
 * - the hash is kept per event, so an edit is located to its event and events can be verified
 *   independently of each other;
 * - `prevHash` is not stored: it is the previous event's hash, and the reader fills it in.
 *
 * Lines are packed into sealed segments (many events to one KV value, under Deno KV's 64 KiB
 * value limit), headed by the position of their first event; the newest events wait as single
 * lines until the store seals them (events/store.ts). Both are stored as bytes, not strings: a
 * string with any character above U+00FF would be stored as UTF-16 and could pass the limit.
 */
import { canonicalJson } from "./hash.ts";
import type { StoredEvent } from "./types.ts";

/** A sealed segment's value stays under this many bytes (Deno KV refuses values over 64 KiB). */
export const SEGMENT_BYTES = 63 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The hashed body of an event: everything but `hash` and `prevHash`, as canonical JSON. */
export function bodyText(event: Omit<StoredEvent, "hash" | "prevHash">): string {
  return canonicalJson(event);
}

export const eventLine = (hash: string, body: string): string => `${hash}\t${body}`;

/** One stored record of the log, decoded. `position` is the slot it is stored in. */
export interface LogRecord {
  /** Where the layout puts it (segment start + index, or the tail key), not the body's claim. */
  slot: number;
  hash: string;
  /** The canonical body text, exactly as stored (and hashed). */
  body: string;
}

export function parseLine(slot: number, line: string): LogRecord {
  const tab = line.indexOf("\t");
  return tab < 0
    ? { slot, hash: "", body: line }
    : { slot, hash: line.slice(0, tab), body: line.slice(tab + 1) };
}

export const encodeLine = (line: string): Uint8Array => encoder.encode(line);
export const lineBytes = (line: string): number => encoder.encode(line).length;

export function decodeTail(slot: number, value: unknown): LogRecord {
  return parseLine(slot, value instanceof Uint8Array ? decoder.decode(value) : String(value));
}

export function encodeSegment(first: number, lines: string[]): Uint8Array {
  return encoder.encode(`${first}\n${lines.join("\n")}`);
}

/** The records of a segment, in order; slots count up from the segment's first position. */
export function decodeSegment(value: unknown): LogRecord[] {
  const text = value instanceof Uint8Array ? decoder.decode(value) : String(value);
  const nl = text.indexOf("\n");
  const first = Number(text.slice(0, nl < 0 ? text.length : nl));
  const out: LogRecord[] = [];
  if (nl < 0) return out;
  let start = nl + 1;
  let slot = first;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    out.push(parseLine(slot++, text.slice(start, end)));
    start = end + 1;
  }
  return out;
}

const TYPE_MEMBER = ',"type":"';

/**
 * The event type a body names, read from its end without parsing it, or null when the body does
 * not end as a canonical body does: `,"type":"<letters and digits>","v":<digits>}`. Sorted keys
 * put `type` and `v` last, and in valid JSON that tail can only be the top-level object's last two
 * members (a nested object's end is followed by another `}`, a string's quotes are escaped), so
 * for a body `JSON.parse` reads, this is the type it gives (a duplicate key's last value wins in
 * both). Used to skip, unparsed, the events a fold has no use for.
 */
export function storedType(body: string): string | null {
  const at = body.lastIndexOf(TYPE_MEMBER);
  if (at < 0) return null;
  const start = at + TYPE_MEMBER.length;
  let i = start;
  for (let c = body.charCodeAt(i); isWordChar(c); c = body.charCodeAt(++i));
  if (i === start || !body.startsWith('","v":', i)) return null;
  let j = i + 6;
  const digits = j;
  for (let c = body.charCodeAt(j); c >= 0x30 && c <= 0x39; c = body.charCodeAt(++j));
  return j > digits && j === body.length - 1 && body.charCodeAt(j) === 0x7d
    ? body.slice(start, i)
    : null;
}

const isWordChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

/** The stored event a record holds; `prevHash` is the hash of the record before it. */
export function recordEvent(r: LogRecord, prevHash: string): StoredEvent {
  let body: Record<string, unknown>;
  try {
    const parsed = JSON.parse(r.body);
    body = typeof parsed === "object" && parsed !== null ? parsed : { unreadable: r.body };
  } catch {
    // Kept, not thrown: the chain check reports the record (its hash cannot match).
    body = { unreadable: r.body };
  }
  body.prevHash = prevHash;
  body.hash = r.hash;
  return body as unknown as StoredEvent;
}

/**
 * Greedy packing of lines into segments of at most `SEGMENT_BYTES`; a line longer than that on
 * its own (the store caps events below it) still gets a segment to itself.
 */
export function packSegments(
  first: number,
  lines: string[],
): { first: number; last: number; value: Uint8Array }[] {
  const out: { first: number; last: number; value: Uint8Array }[] = [];
  let start = 0;
  let bytes = 0;
  const header = (pos: number) => String(pos).length + 1;
  for (let i = 0; i < lines.length; i++) {
    const b = lineBytes(lines[i]) + 1;
    if (i > start && bytes + b + header(first + start) > SEGMENT_BYTES) {
      out.push(segment(first + start, lines.slice(start, i)));
      start = i;
      bytes = 0;
    }
    bytes += b;
  }
  if (start < lines.length) out.push(segment(first + start, lines.slice(start)));
  return out;
}

const segment = (first: number, lines: string[]) => ({
  first,
  last: first + lines.length - 1,
  value: encodeSegment(first, lines),
});
