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
const CHUNK_BYTES = 16 * 1024;
/** A chunk grown past this many characters (at most 60 KiB of UTF-8) is split in two. */
const SPLIT_BYTES = 20 * 1024;

const enc = new TextEncoder();
const dec = new TextDecoder();

const chunkKey = (first: Deno.KvKey): Deno.KvKey => [...CHUNKS, ...first];

/** Writes documents that arrive in KV key order (the live projections as listed). */
export class DocChunkWriter {
  #lines: string[] = [];
  #bytes = 0;
  #first: Deno.KvKey | null = null;
  #pending: { key: Deno.KvKey; value: unknown }[] = [];
  documents = 0;

  constructor(readonly state: Deno.Kv) {}

  async add(key: Deno.KvKey, text: string): Promise<void> {
    const line = `${keyId(key)}\t${text}`;
    if (this.#first && this.#bytes + line.length > CHUNK_BYTES) await this.#seal();
    this.#first ??= key;
    this.#lines.push(line);
    this.#bytes += line.length + 1;
    this.documents++;
  }

  async #seal(): Promise<void> {
    if (!this.#first) return;
    this.#pending.push({ key: chunkKey(this.#first), value: enc.encode(this.#lines.join("\n")) });
    this.#lines = [];
    this.#bytes = 0;
    this.#first = null;
    if (this.#pending.length >= 20) await this.#commit();
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
  key: Deno.KvKey;
  docs: Map<string, string>;
}

function parseChunk(key: Deno.KvKey, value: Uint8Array): Chunk {
  const docs = new Map<string, string>();
  for (const line of dec.decode(value).split("\n")) {
    if (!line) continue;
    const tab = line.indexOf("\t");
    docs.set(line.slice(0, tab), line.slice(tab + 1));
  }
  return { key, docs };
}

/** Reads and updates documents in the chunks (the incremental audit). */
export class DocChunks {
  readonly #cache = new Map<string, Chunk>();
  /** Documents below every chunk's first key, waiting for a chunk of their own. */
  #orphans: Chunk | null = null;

  constructor(readonly state: Deno.Kv) {}

  async #chunkFor(key: Deno.KvKey): Promise<Chunk | null> {
    const iter = this.state.list<Uint8Array>({
      start: [...CHUNKS],
      end: [...chunkKey(key), new Uint8Array()],
    }, { reverse: true, limit: 1 });
    for await (const e of iter) {
      const id = keyId(e.key);
      const hit = this.#cache.get(id);
      if (hit) return hit;
      const c = parseChunk(e.key, e.value);
      this.#cache.set(id, c);
      return c;
    }
    return null;
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
    if (!c) c = this.#orphans ??= { key: chunkKey(key), docs: new Map() };
    if (doc === null || doc === undefined) c.docs.delete(id);
    else c.docs.set(id, JSON.stringify(doc));
    (c as Chunk & { dirty?: boolean }).dirty = true;
  }

  async flush(): Promise<void> {
    const writes: { key: Deno.KvKey; value: unknown }[] = [];
    for (const c of this.#cache.values()) {
      if ((c as { dirty?: boolean }).dirty) writes.push(...chunkWrites(c));
    }
    if (this.#orphans && this.#orphans.docs.size) {
      const keys = [...this.#orphans.docs.keys()].map((id) => JSON.parse(id) as Deno.KvKey);
      keys.sort(compareKvKeys);
      writes.push(...chunkWrites({ key: chunkKey(keys[0]), docs: this.#orphans.docs }));
    }
    this.#cache.clear();
    this.#orphans = null;
    await commitInBatches(this.state, writes);
  }
}

/** The writes for a changed chunk: itself, or two halves when it grew too large. */
function chunkWrites(c: Chunk): { key: Deno.KvKey; value: unknown }[] {
  const lines = [...c.docs].map(([id, text]) => `${id}\t${text}`);
  const bytes = lines.reduce((n, l) => n + l.length + 1, 0);
  if (lines.length === 0) return [{ key: c.key, value: null }];
  if (bytes <= SPLIT_BYTES || lines.length < 2) {
    return [{ key: c.key, value: enc.encode(lines.join("\n")) }];
  }
  // Split in key order: the upper half gets a chunk keyed by its own first document.
  const sorted = [...c.docs.keys()].map((id) => ({ id, key: JSON.parse(id) as Deno.KvKey }));
  sorted.sort((a, b) => compareKvKeys(a.key, b.key));
  const half = Math.floor(sorted.length / 2);
  const part = (from: number, to: number) =>
    enc.encode(sorted.slice(from, to).map((s) => `${s.id}\t${c.docs.get(s.id)}`).join("\n"));
  return [
    { key: c.key, value: part(0, half) },
    { key: chunkKey(sorted[half].key), value: part(half, sorted.length) },
  ];
}
