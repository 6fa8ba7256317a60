/**
 * An order-independent digest of a set of projection documents: the sum, lane by lane, of a
 * salted hash of each (key, document) pair (an additive multiset hash). Two sides that add the
 * same documents in any order reach the same sum. The salt is drawn per replay, so nobody who
 * edits the live projections beforehand can pick documents whose hashes cancel out.
 *
 * The hash of a document is BLAKE3 of a 32-byte key drawn from the salt followed by the document's
 * line, `<key id>\t<JSON text>` in UTF-8 (the line the audit's state stores too): BLAKE3 with a
 * secret prefix is a PRF, as the salted SHA-256 before it was. It replaced node:crypto's SHA-256,
 * which cost ~3.3 µs a document (most of it the call into the runtime), on 3.6 million documents a
 * million-event audit hashes. blake3-jit computes it in plain JavaScript for lines under 4 KiB
 * (most are under 1 KiB): 0.75-0.87 µs a document of the audit's own, against 1.2-1.6 µs through
 * hash-wasm's WebAssembly, whose cost was mostly the calls and the copy of each digest.
 */
import { createHash } from "node:crypto";
import { hashInto } from "blake3-jit";
import { toHex } from "../src/kernel/hashing.ts";
import { PROJECTIONS } from "../events/keys.ts";
import { readAhead } from "../events/read-ahead.ts";
import { bigintSafe, keyId } from "./key-hash.ts";
import type { LiveCut } from "./live-cut.ts";
import { ByteSink } from "../src/kernel/json-bytes.ts";

const LANES = 8;
/** Bytes of the secret prefix each document's line is hashed behind. */
const DIGEST_KEY_BYTES = 32;

/**
 * Turns documents into the hashes the digest adds: each line hashed behind the salt's key. Keeps
 * one buffer that starts with the key, the line written after it.
 */
export class LineHasher {
  readonly sink = new ByteSink();
  /** Where each document's hash is written (the lanes read it in place). */
  readonly #hash = new Uint8Array(32);
  readonly #lanes = new Uint32Array(this.#hash.buffer, 0, LANES);

  constructor(readonly salt: string) {
    const key = createHash("sha256").update(`projection digest key\n${salt}`).digest();
    this.sink.ensure(DIGEST_KEY_BYTES);
    this.sink.buf.set(key.subarray(0, DIGEST_KEY_BYTES));
    this.sink.length = DIGEST_KEY_BYTES;
  }

  /** Starts a line: the sink then holds the key, and the caller writes the line after it. */
  begin(): ByteSink {
    this.sink.length = DIGEST_KEY_BYTES;
    return this.sink;
  }

  /** The line written since `begin`. */
  line(): Uint8Array {
    return this.sink.buf.subarray(DIGEST_KEY_BYTES, this.sink.length);
  }

  /** Adds the hash of the key and the line written since `begin` to `sum`. */
  addTo(sum: Uint32Array): void {
    hashInto(this.sink.bytes(), this.#hash);
    const lanes = this.#lanes;
    for (let i = 0; i < LANES; i++) sum[i] += lanes[i];
  }
}

export class ProjectionDigest {
  readonly #sum = new Uint32Array(LANES);
  /** Documents in the sum. */
  count = 0;
  #hasher: LineHasher | null = null;

  constructor(readonly salt: string) {}

  /** A null document is no document: it adds nothing. */
  add(key: Deno.KvKey, doc: unknown, id?: string): void {
    if (doc === null || doc === undefined) return;
    this.addText(key, docText(doc), id);
  }

  /** `add` for a document already turned into its JSON text (`docText`); `id` is `keyId(key)`. */
  addText(key: Deno.KvKey, text: string, id = keyId(key)): void {
    const h = this.hasher;
    const sink = h.begin();
    sink.text(id);
    sink.byte(0x09);
    sink.text(text);
    this.addLine(h);
  }

  /** Adds the line `hasher` holds (written after its `begin`), hashed with this digest's salt. */
  addLine(hasher: LineHasher): void {
    if (hasher.salt !== this.salt) throw new Error("a line hashed with another salt");
    hasher.addTo(this.#sum);
    this.count++;
  }

  /** The hasher for this digest's salt (lines written into it, then `addLine`). */
  get hasher(): LineHasher {
    return this.#hasher ??= new LineHasher(this.salt);
  }

  /** The lanes of the sum, to send the digest to another thread. */
  get sum(): number[] {
    return [...this.#sum];
  }

  /** A digest made elsewhere (`sum` and `count` of it) with the same salt. */
  static of(salt: string, sum: number[], count: number): ProjectionDigest {
    const d = new ProjectionDigest(salt);
    d.#sum.set(sum);
    d.count = count;
    return d;
  }

  /** The digest of both sets of documents (made with the same salt). */
  plus(other: ProjectionDigest): ProjectionDigest {
    if (other.salt !== this.salt) throw new Error("digests made with different salts");
    const d = ProjectionDigest.of(this.salt, this.sum, this.count + other.count);
    for (let i = 0; i < LANES; i++) d.#sum[i] += other.#sum[i];
    return d;
  }

  equals(other: ProjectionDigest): boolean {
    return this.count === other.count && this.#sum.every((v, i) => v === other.#sum[i]);
  }
}

/**
 * The document as JSON text. Property order counts here, so a live document whose properties
 * were stored in another order digests differently; callers then fall back to a comparison by
 * canonical JSON, which is slower but order-blind.
 */
export function docText(doc: unknown): string {
  try {
    return JSON.stringify(doc);
  } catch {
    return JSON.stringify(doc, bigintSafe);
  }
}

export const randomSalt = (): string => toHex(crypto.getRandomValues(new Uint8Array(32)));

/**
 * The digest of the live projections `names`. A document under any other projection name is a
 * stray: it is counted apart, and any stray makes the two sides differ.
 */
export async function digestLiveProjections(
  kv: Deno.Kv,
  names: string[],
  salt: string,
  cut?: LiveCut,
  /** Each live document added to the digest, as its text (the audit keeps them for next time). */
  onDoc?: (key: Deno.KvKey, text: string, id: string) => void | Promise<void>,
): Promise<{ digest: ProjectionDigest; strays: number }> {
  const digest = new ProjectionDigest(salt);
  const checked = new Set(names);
  let strays = 0;
  let page: Deno.KvEntry<unknown>[] = [];
  const add = async () => {
    // Documents changed since the cut were changed by events already in the log when they were
    // read: poll after reading, before adding, and leave those out (the cut settles them).
    await cut?.poll();
    for (const e of page) {
      const name = e.key[PROJECTIONS.length];
      if (typeof name !== "string" || !checked.has(name)) strays++;
      else if (e.value === null || e.value === undefined) continue;
      else {
        const id = keyId(e.key);
        if (cut?.moved.has(id)) continue;
        const text = docText(e.value);
        digest.addText(e.key, text, id);
        await onDoc?.(e.key, text, id);
      }
    }
    page = [];
  };
  for await (const e of readAhead(kv.list({ prefix: PROJECTIONS }, { batchSize: 1000 }))) {
    page.push(e);
    if (page.length >= 1000) await add();
  }
  await add();
  return { digest, strays };
}

/** Adds every document stored under the projections `names` in `kv`. */
export async function addStoredDocuments(
  kv: Deno.Kv,
  names: string[],
  digest: ProjectionDigest,
  hold?: Held,
): Promise<void> {
  for (const name of names) {
    for await (const e of kv.list({ prefix: [...PROJECTIONS, name] }, { batchSize: 1000 })) {
      if (hold?.takes(e.key, e.value)) continue;
      digest.add(e.key, e.value);
    }
  }
}

/** Rebuilt documents kept out of the digest (those the live cut settles one by one). */
export class Held {
  readonly docs = new Map<string, unknown>();
  constructor(readonly ids: { has(id: string): boolean; readonly size: number }) {}

  /** True (and kept) when `key` is one of `ids`. */
  takes(key: Deno.KvKey, doc: unknown, id = keyId(key)): boolean {
    // Usually none are held: asking an empty set still hashes the id, a fresh string for every
    // document the fold hands on (0.7 s of CPU at a million events).
    if (this.ids.size === 0 || !this.ids.has(id)) return false;
    this.docs.set(id, doc);
    return true;
  }
}
