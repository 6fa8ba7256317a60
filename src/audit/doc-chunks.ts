/**
 * The projection documents an audit checked, kept in its state KV for the next incremental audit:
 * that one rebuilds only the documents touched after the checkpoint, and needs their values at
 * the checkpoint to fold the new events onto.
 *
 * Documents are packed many to a KV value (`keyId\tJSON` lines, about 16 KiB a chunk), each
 * chunk stored under `["c", ...first document key]`: a million documents are a few thousand
 * writes, not a million. A document lives in the chunk with the greatest first key not above
 * its own key, which one reverse `list` finds; order inside a chunk does not matter.
 */
import { keyId } from "../../projections/key-hash.ts";
import { commitInBatches, compareKvKeys } from "../../projections/replay.ts";

const CHUNKS = ["c"] as const;
/** One small entry per chunk, so the chunk holding a key is found in memory, not by a read. */
const INDEX = ["i"] as const;
const CHUNK_BYTES = 16 * 1024;
/** A chunk grown past this many characters (at most 60 KiB of UTF-8) is split. */
const SPLIT_BYTES = 20 * 1024;

const enc = new TextEncoder();
const dec = new TextDecoder();

const chunkKey = (first: Deno.KvKey): Deno.KvKey => [...CHUNKS, ...first];
const indexKey = (first: Deno.KvKey): Deno.KvKey => [...INDEX, ...first];

type Write = { key: Deno.KvKey; value: unknown };

/** A chunk's writes: the chunk and its index entry (value null: both deleted). */
const chunkWrite = (first: Deno.KvKey, value: Uint8Array | null): Write[] => [
  { key: chunkKey(first), value },
  { key: indexKey(first), value: value === null ? null : 1 },
];

/** Writes documents that arrive in KV key order (the live projections as listed). */
export class DocChunkWriter {
  #lines: string[] = [];
  #bytes = 0;
  #first: Deno.KvKey | null = null;
  #pending: Write[] = [];
  documents = 0;

  constructor(readonly state: Deno.Kv) {}

  async add(key: Deno.KvKey, text: string, id = keyId(key)): Promise<void> {
    const line = `${id}\t${text}`;
    if (this.#first && this.#bytes + line.length > CHUNK_BYTES) await this.#seal();
    this.#first ??= key;
    this.#lines.push(line);
    this.#bytes += line.length + 1;
    this.documents++;
  }

  async #seal(): Promise<void> {
    if (!this.#first) return;
    this.#pending.push(...chunkWrite(this.#first, enc.encode(this.#lines.join("\n"))));
    this.#lines = [];
    this.#bytes = 0;
    this.#first = null;
    if (this.#pending.length >= 40) await this.#commit();
  }

  async #commit(): Promise<void> {
    const out = this.#pending;
    this.#pending = [];
    await commitInBatches(this.state, out);
  }

  async finish(): Promise<void> {
    await this.#seal();
    await this.#commit();
  }
}

interface Chunk {
  /** The first document key the chunk is stored under. */
  first: Deno.KvKey;
  docs: Map<string, string>;
  dirty: boolean;
}

function parseChunk(first: Deno.KvKey, value: Uint8Array): Chunk {
  const docs = new Map<string, string>();
  for (const line of dec.decode(value).split("\n")) {
    if (!line) continue;
    const tab = line.indexOf("\t");
    docs.set(line.slice(0, tab), line.slice(tab + 1));
  }
  return { first, docs, dirty: false };
}

/** Reads and updates documents in the chunks (the incremental audit). */
export class DocChunks {
  #index: Deno.KvKey[] | null = null;
  readonly #cache = new Map<string, Chunk>();
  /** Documents below every chunk's first key, waiting for a chunk of their own. */
  #orphans: Chunk | null = null;

  constructor(readonly state: Deno.Kv) {}

  async #loadIndex(): Promise<Deno.KvKey[]> {
    if (this.#index) return this.#index;
    const index: Deno.KvKey[] = [];
    for await (const e of this.state.list({ prefix: [...INDEX] }, { batchSize: 1000 })) {
      index.push(e.key.slice(INDEX.length));
    }
    return (this.#index = index);
  }

  /** The first key of the chunk that holds (or would hold) `key`; null: below every chunk. */
  #locate(index: Deno.KvKey[], key: Deno.KvKey): Deno.KvKey | null {
    let lo = 0;
    let hi = index.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (compareKvKeys(index[mid], key) <= 0) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? null : index[found];
  }

  /** Reads the chunks holding `keys`, ten to a read. */
  async load(keys: Deno.KvKey[]): Promise<void> {
    const index = await this.#loadIndex();
    const wanted = new Map<string, Deno.KvKey>();
    for (const key of keys) {
      const first = this.#locate(index, key);
      if (first === null) continue;
      const id = keyId(first);
      if (!this.#cache.has(id)) wanted.set(id, first);
    }
    const firsts = [...wanted.values()];
    for (let i = 0; i < firsts.length; i += 10) {
      const batch = firsts.slice(i, i + 10);
      const entries = await this.state.getMany<Uint8Array[]>(batch.map(chunkKey));
      entries.forEach((e, j) => {
        const c = e.value
          ? parseChunk(batch[j], e.value)
          : { first: batch[j], docs: new Map(), dirty: false };
        this.#cache.set(keyId(batch[j]), c);
      });
    }
  }

  async #chunkFor(key: Deno.KvKey): Promise<Chunk | null> {
    const index = await this.#loadIndex();
    const first = this.#locate(index, key);
    if (first === null) return null;
    const id = keyId(first);
    if (!this.#cache.has(id)) await this.load([key]);
    return this.#cache.get(id)!;
  }

  /** The document stored for `key` (undefined when there is none). */
  async get(key: Deno.KvKey): Promise<unknown> {
    const id = keyId(key);
    const c = await this.#chunkFor(key);
    const text = c?.docs.get(id) ?? this.#orphans?.docs.get(id);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** Sets (null: deletes) a document; `flush` writes the chunks changed. */
  async set(key: Deno.KvKey, doc: unknown): Promise<void> {
    const id = keyId(key);
    let c = await this.#chunkFor(key);
    if (!c) c = this.#orphans ??= { first: key, docs: new Map(), dirty: true };
    if (doc === null || doc === undefined) c.docs.delete(id);
    else c.docs.set(id, JSON.stringify(doc));
    c.dirty = true;
  }

  async flush(): Promise<void> {
    const writes: Write[] = [];
    for (const c of this.#cache.values()) if (c.dirty) writes.push(...chunkWrites(c, true));
    if (this.#orphans && this.#orphans.docs.size) writes.push(...chunkWrites(this.#orphans, false));
    this.#cache.clear();
    this.#orphans = null;
    this.#index = null;
    await commitInBatches(this.state, writes);
  }
}

/**
 * The writes for a changed chunk, split in key order when it grew too large. A stored chunk keeps
 * its key for its first part; new documents below it never land in it (they go to the chunk
 * before, or to the orphans).
 */
function chunkWrites(c: Chunk, stored: boolean): Write[] {
  const sorted = [...c.docs.keys()].map((id) => ({ id, key: JSON.parse(id) as Deno.KvKey }));
  sorted.sort((a, b) => compareKvKeys(a.key, b.key));
  if (sorted.length === 0) return stored ? chunkWrite(c.first, null) : [];
  const out: Write[] = [];
  let part: string[] = [];
  let size = 0;
  let first = stored ? c.first : sorted[0].key;
  for (const s of sorted) {
    const line = `${s.id}\t${c.docs.get(s.id)}`;
    if (part.length && size + line.length > SPLIT_BYTES) {
      out.push(...chunkWrite(first, enc.encode(part.join("\n"))));
      part = [];
      size = 0;
      first = s.key;
    }
    part.push(line);
    size += line.length + 1;
  }
  out.push(...chunkWrite(first, enc.encode(part.join("\n"))));
  return out;
}
