/**
 * Reads a Deno KV file's rows directly, read-only, through SQLite: the raw key and value bytes of
 * every entry under a prefix, in key order, a page at a time. `Deno.Kv.list` decodes every key
 * and value into JavaScript objects, which at a million events (1.8 million projection documents)
 * cost the audit's live pass most of its time; the audit turns the raw bytes into the text it
 * compares (kv-key-codec.ts, v8-json.ts) for a fraction of that.
 *
 * The file is denokv's SQLite layout (`kv` table: k, v, v_encoding, version, seq). `open` checks
 * it and answers null for anything else, and the caller lists through `Deno.Kv`. Each page
 * is one statement, so one consistent snapshot of a file a running service writes to (WAL mode:
 * readers do not block the writer); the caller deals with what moves between pages.
 */
import { deserialize } from "node:v8";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { HEAD, type LogHead } from "./keys.ts";
import { encodeKvKey } from "./kv-key-codec.ts";
import { compareBytes } from "../src/kernel/bytes.ts";

/** How a value is stored: V8's serialization, a little-endian u64 (`Deno.KvU64`), raw bytes. */
export const V8 = 1;
export const LE64 = 2;
export const BYTES = 3;

export interface RawEntry {
  key: Uint8Array;
  value: Uint8Array;
  encoding: number;
}

/**
 * A row's versionstamp as `Deno.Kv` hands it out: the commit's version (8 bytes) and two zero
 * bytes, in hex. denokv makes it from the version alone (`version_to_versionstamp`), whatever the
 * row's `seq` column holds.
 */
const VERSIONSTAMP = "printf('%016x0000', version)";

/**
 * A page of rows as one row: the keys and the values each joined into one blob, and their lengths
 * and encodings as comma-separated text. node:sqlite makes a new buffer for every blob it hands
 * out, which for millions of small documents is most of the cost of reading them; one row per
 * page makes a few buffers instead. `group_concat` joins blobs byte for byte in a UTF-8
 * database (`open` checks the encoding) and the cast back to a blob copies nothing; the
 * aggregates take the ordered subquery's rows in its order, which `pages` checks.
 */
const PACKED_PAGE = `select count(*), cast(group_concat(k, '') as blob),
    cast(group_concat(v, '') as blob), group_concat(length(k)), group_concat(length(v)),
    group_concat(v_encoding), sum(typeof(k) <> 'blob' or typeof(v) <> 'blob')
  from (select k, v, v_encoding from kv where k > ? and k < ? order by k limit ?)`;

export class KvFile {
  private constructor(
    readonly db: DatabaseSync,
    readonly page: StatementSync,
    readonly packed: StatementSync | null,
    readonly one: StatementSync,
    readonly versions: StatementSync,
    readonly below: StatementSync,
    readonly inRange: StatementSync,
  ) {}

  /** The KV file at `path`, or null when it is not a KV file this reader knows. */
  static open(path: string): KvFile | null {
    let db: DatabaseSync | null = null;
    try {
      db = new DatabaseSync(path, { readOnly: true });
      const columns = new Set(
        (db.prepare("select name from pragma_table_info('kv')").all() as { name: string }[])
          .map((c) => c.name),
      );
      for (const c of ["k", "v", "v_encoding", "version", "seq"]) {
        if (!columns.has(c)) throw new Error(`no column ${c}`);
      }
      // Every row, expired or not: Deno.Kv too hands out an expired entry until its background
      // clean-up deletes it, and the audit must see what the service sees.
      const page = db.prepare(
        "select k, v, v_encoding from kv where k > ? and k < ? order by k limit ?",
      );
      const one = db.prepare("select k, v, v_encoding from kv where k = ?");
      const versions = db.prepare(
        `select k, ${VERSIONSTAMP} from kv where k > ? and k < ? order by k limit ?`,
      );
      const below = db.prepare(
        "select k, v, v_encoding from kv where k > ? and k <= ? order by k desc limit 1",
      );
      const inRange = db.prepare(
        `select k, v, v_encoding, ${VERSIONSTAMP} from kv where k >= ? and k < ? order by k limit ?`,
      );
      const utf8 = (db.prepare("pragma encoding").get() as { encoding?: string }).encoding ===
        "UTF-8";
      const packed = utf8 ? db.prepare(PACKED_PAGE) : null;
      for (const st of [page, one, versions, below, inRange, packed]) {
        // Rows as arrays, not objects: a third of the cost per row. Deno has the method; its
        // node:sqlite types do not list it yet.
        (st as StatementSync & { setReturnArrays(on: boolean): void } | null)?.setReturnArrays(
          true,
        );
      }
      return new KvFile(db, page, packed, one, versions, below, inRange);
    } catch {
      db?.close();
      return null;
    }
  }

  /**
   * Every entry whose key starts with `prefix` (not the prefix itself), in key order, `size` to a
   * page; with `after` (an encoded key under the prefix), only those whose key is greater. Each
   * page is read when the previous one has been handed out.
   */
  *pages(prefix: Uint8Array, size = 2000, after = prefix): Generator<RawEntry[]> {
    const end = Uint8Array.of(...prefix, 0xff);
    for (;;) {
      const entries = this.#packedPage(after, end, size) ??
        (this.page.all(after, end, size) as unknown as KvRow[]).map(toEntry);
      if (entries.length === 0) return;
      yield entries;
      if (entries.length < size) return;
      after = entries[entries.length - 1].key;
    }
  }

  /**
   * Up to `limit` entries from `start` (an encoded key, included) to `end` (excluded), in key
   * order, each with its versionstamp, in one statement: one snapshot, and for large values (the
   * log's 63 KiB segments) fewer page reads than pages of a few rows through `Deno.Kv`, and no
   * trip through its thread. A row whose key or value is not a blob is an error, as it is to
   * `Deno.Kv`.
   */
  range(
    start: Uint8Array,
    end: Uint8Array,
    limit: number,
  ): (RawEntry & { versionstamp: string })[] {
    const rows = this.inRange.all(start, end, limit) as unknown as [
      unknown,
      unknown,
      number,
      string,
    ][];
    return rows.map(([key, value, encoding, versionstamp]) => {
      if (!(key instanceof Uint8Array) || !(value instanceof Uint8Array)) {
        throw new Error("a KV entry whose key or value is not a blob: Deno KV cannot read it");
      }
      return { key, value, encoding, versionstamp };
    });
  }

  /**
   * The page after `after` as one joined row (`PACKED_PAGE`); null when this file is not read so,
   * or when the row is not taken (`unpack`: the page is then read row by row).
   */
  #packedPage(after: Uint8Array, end: Uint8Array, size: number): RawEntry[] | null {
    if (!this.packed) return null;
    const row = this.packed.get(after, end, size) as unknown as PackedRow;
    if (row[0] === 0) return [];
    const entries = unpack(row);
    return entries.length === row[0] ? entries : null;
  }

  /**
   * The key and versionstamp (as `Deno.Kv` writes it: 20 hex digits) of every entry under
   * `prefix`, in key order, without reading the values: SQLite follows a large value's overflow
   * pages to the columns after it, but nothing is copied out, which `Deno.Kv` cannot do (the
   * incremental audit's prefix proof needs only the versionstamps).
   */
  versionstamps(prefix: Uint8Array, size = 4000): Generator<[Uint8Array, string][]> {
    return paged<[Uint8Array, string]>(this.versions, prefix, size);
  }

  /**
   * Runs `read` in one read transaction: every read it makes sees the same snapshot of a file a
   * running service writes to (WAL mode), as one `getMany` through `Deno.Kv` would.
   */
  inSnapshot<T>(read: () => T): T {
    this.db.exec("BEGIN");
    try {
      return read();
    } finally {
      this.db.exec("COMMIT");
    }
  }

  /** The entry with the greatest key under `prefix` not above `key` (both encoded), or null. */
  floor(prefix: Uint8Array, key: Uint8Array): RawEntry | null {
    return entryOf(this.below, prefix, key);
  }

  /** The entry at `key` (encoded), or null. */
  get(key: Uint8Array): RawEntry | null {
    return entryOf(this.one, key);
  }

  close(): void {
    this.db.close();
  }
}

export type PackedRow = [
  count: number,
  keys: Uint8Array | null,
  values: Uint8Array | null,
  keyLengths: string | null,
  valueLengths: string | null,
  encodings: string | null,
  /** Rows whose key or value is not a blob (a file denokv did not write): read row by row. */
  notBlobs?: number | null,
];

/**
 * The entries of a `PACKED_PAGE` row, each a view into the page's two blobs; fewer than its count
 * when a key or value is not a blob, the lengths do not add up or the keys are not in ascending
 * order (the caller then reads the page row by row).
 */
export function unpack(
  [count, keys, values, keyLengths, valueLengths, encodings, notBlobs]: PackedRow,
): RawEntry[] {
  const out: RawEntry[] = [];
  if (notBlobs || !keys || !values) return out;
  const kl = numbers(keyLengths, count), vl = numbers(valueLengths, count);
  const enc = numbers(encodings, count);
  if (!kl || !vl || !enc) return out;
  let k = 0, v = 0;
  let before: Uint8Array | null = null;
  for (let i = 0; i < count; i++) {
    const key = keys.subarray(k, k += kl[i]);
    if (before && compareBytes(before, key) >= 0) return out;
    out.push({ key, value: values.subarray(v, v += vl[i]), encoding: enc[i] });
    before = key;
  }
  return k === keys.length && v === values.length ? out : [];
}

/** `count` comma-separated non-negative integers, or null when the text is not exactly that. */
function numbers(text: string | null, count: number): number[] | null {
  if (text === null) return null;
  const out: number[] = [];
  let n = 0, digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0x2c;
    if (c === 0x2c) {
      if (digits === 0) return null;
      out.push(n);
      n = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      n = n * 10 + c - 0x30;
      digits++;
    } else return null;
  }
  return out.length === count ? out : null;
}

/** A row's value as `Deno.Kv` would hand it out (bytes: a view of the row's). */
export function decodeRawValue(row: RawEntry): unknown {
  if (row.encoding === V8) return deserialize(row.value);
  if (row.encoding === BYTES) return row.value;
  if (row.encoding === LE64) {
    return new Deno.KvU64(
      new DataView(row.value.buffer, row.value.byteOffset).getBigUint64(0, true),
    );
  }
  throw new Error(`a KV value in an encoding this reader does not know (${row.encoding})`);
}

/** The one row (`k, v, v_encoding`) `statement` answers for `params`, as an entry, or null. */
function entryOf(statement: StatementSync, ...params: Uint8Array[]): RawEntry | null {
  const row = statement.get(...params) as unknown as KvRow | undefined;
  return row ? toEntry(row) : null;
}

/** A row of `k, v, v_encoding`, as node:sqlite returns it (rows as arrays). */
type KvRow = [Uint8Array, Uint8Array, number];

const toEntry = ([key, value, encoding]: KvRow): RawEntry => ({ key, value, encoding });

/**
 * The rows of `statement` (`k > ? and k < ? order by k limit ?`, the key first in each row) under
 * `prefix`, `size` to a page, each page one statement from just past the last key of the one
 * before.
 */
function* paged<Row extends [Uint8Array, ...unknown[]]>(
  statement: StatementSync,
  prefix: Uint8Array,
  size: number,
): Generator<Row[]> {
  // Past every key under the prefix: the next byte of such a key is a part's tag, below 0xFF.
  const end = Uint8Array.of(...prefix, 0xff);
  let after = prefix;
  for (;;) {
    const rows = statement.all(after, end, size) as unknown as Row[];
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < size) return;
    after = rows[rows.length - 1][0];
  }
}

const HEAD_KEY = encodeKvKey(HEAD);

/** The log head's position as the file holds it now (0 when there is none). */
export function logHeadPosition(file: KvFile): number {
  const row = file.get(HEAD_KEY);
  if (!row || row.encoding !== V8) return 0;
  const head = deserialize(row.value) as LogHead | null;
  return typeof head?.position === "number" ? head.position : 0;
}
