/**
 * The live side of the audit's digest read straight from a KV file (kv-file.ts): the same sum as
 * `digestLiveProjections` (doc-digest.ts) over the same documents, but each document's line is
 * made from its stored bytes (kv-key-codec.ts, v8-json.ts) instead of a decoded object, about half
 * the cost per document (10.7 s instead of 20.1 s for 1.8 million). What V8 bytes the transcoder
 * does not take (dates, bigints, shared references, anything V8 would refuse) are decoded by
 * `node:v8` and written as `docText` writes them (or refused, as Deno KV refuses them).
 */
import { PROJECTIONS } from "../events/keys.ts";
import { docText, type ProjectionDigest } from "./doc-digest.ts";
import { keyId } from "./key-hash.ts";
import {
  decodeRawValue,
  type KvFile,
  logHeadPosition,
  type RawEntry,
  V8,
} from "../events/kv-file.ts";
import { decodeKvKey, encodeKvKey, partEnd, writeKeyId } from "../events/kv-key-codec.ts";
import type { LiveCut } from "./live-cut.ts";
import type { ByteSink } from "../src/kernel/json-bytes.ts";
import { isNullText, v8ToJson } from "./v8-json.ts";

/** Rows read per page; the cut is polled after each page, as the listing does per page. */
const PAGE = 1000;

export interface LiveFileStats {
  /** Documents whose value the transcoder did not take (decoded the slow way). */
  slowValues: number;
}

/**
 * Adds every live document of `names` to `digest`, leaving out those the cut sees moved after
 * its head; a document under any other projection name is a stray. `onLine` gets each added
 * document's line (`<key id>\t<JSON text>`, a view valid until it returns or awaits).
 */
export async function digestLiveFile(
  file: KvFile,
  names: string[],
  digest: ProjectionDigest,
  cut?: LiveCut,
  onLine?: (line: Uint8Array, idEnd: number, keyOf: () => Deno.KvKey) => void | Promise<void>,
  stats: LiveFileStats = { slowValues: 0 },
): Promise<{ digest: ProjectionDigest; strays: number }> {
  const hasher = digest.hasher;
  const names_ = new ProjectionNames(names);
  let strays = 0;
  for (const page of file.pages(encodeKvKey(PROJECTIONS), PAGE)) {
    // Documents changed since the cut were changed by events already in the log when they were
    // read: poll after reading, before adding, and leave those out (the cut settles them). The
    // head read from the file after the page says whether there is anything to poll: a poll
    // through Deno.Kv costs milliseconds, and a quiet log is the usual case.
    if (cut && logHeadPosition(file) > cut.seen) await cut.poll();
    for (const row of page) {
      if (!names_.checked(row.key)) {
        strays++;
        continue;
      }
      const sink = hasher.begin();
      const start = sink.length;
      let key: Deno.KvKey | undefined;
      if (!writeKeyId(row.key, sink)) {
        // A byte-string or bigint part: keyId's own way.
        key = decodeKvKey(row.key) ?? undefined;
        if (!key) throw new Error(`the KV file holds a key that is not a KV key: ${row.key}`);
        sink.text(keyId(key));
      }
      const idEnd = sink.length - start;
      if (cut?.moved.size && cut.moved.has(text.decode(hasher.line()))) continue;
      sink.byte(0x09);
      const at = sink.length;
      const how = writeValue(row, sink);
      if (how === "none") continue;
      if (sink.length - at === 4 && isNullText(sink.buf, at)) continue; // null: no document
      if (how === "slow") stats.slowValues++;
      digest.addLine(hasher);
      const raw = row.key;
      await onLine?.(hasher.line(), idEnd, () => key ?? decodeKvKey(raw)!);
    }
  }
  return { digest, strays };
}

const text = new TextDecoder();

/**
 * Whether an encoded projection key is under one of `names` (its second part). Rows come in key
 * order, so the name is decoded once per projection, not per row.
 */
class ProjectionNames {
  readonly #names: Set<string>;
  /** The last name part seen (tag to terminator) and whether it is checked. */
  #last = new Uint8Array(0);
  #lastChecked = false;
  readonly #skip = encodeKvKey(PROJECTIONS).length;

  constructor(names: string[]) {
    this.#names = new Set(names);
  }

  checked(key: Uint8Array): boolean {
    const from = this.#skip;
    const last = this.#last;
    // The cached part ends in its terminating 0x00; a 0xFF after it would make that 0x00 part of
    // a longer name (an escaped NUL), not the end of this one.
    if (key.length > from + last.length && last.length > 0 && key[from + last.length] !== 0xff) {
      let same = true;
      for (let i = 0; i < last.length; i++) {
        if (key[from + i] !== last[i]) {
          same = false;
          break;
        }
      }
      if (same) return this.#lastChecked;
    }
    const part = decodeKvKey(key)?.[PROJECTIONS.length];
    this.#lastChecked = typeof part === "string" && this.#names.has(part);
    // The name's encoded part: its tag, its bytes, and the terminating 0x00.
    const end = partEnd(key, from + 1);
    this.#last = key[from] === 0x02 && end > 0 ? key.slice(from, end + 1) : new Uint8Array(0);
    return this.#lastChecked;
  }
}

/** Writes the value's JSON text, by the transcoder ("fast") or decoded; "none": no document. */
function writeValue(row: RawEntry, sink: ByteSink): "fast" | "slow" | "none" {
  if (row.encoding === V8 && v8ToJson(row.value, sink)) return "fast";
  const value = decodeRawValue(row);
  if (value === null || value === undefined) return "none";
  sink.text(docText(value));
  return "slow";
}
