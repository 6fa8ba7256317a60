/**
 * Projection key ids (a KV key as one string) and their hashing for the replay's bookkeeping: a
 * Bloom filter of ids for "in the audit's state", one of fingerprints for "touched before", and a
 * map by 32-bit fingerprint for "last touched". All live in typed arrays, so a million keys cost
 * megabytes, not the hundreds a `Map<string, …>` of them would.
 */

/** A `JSON.stringify` replacer for values that may hold bigints (which JSON cannot). */
export const bigintSafe = (_k: string, v: unknown) => (typeof v === "bigint" ? `${v}n` : v);

/**
 * Numbers JSON cannot tell apart (-0 from 0; NaN and the infinities, all "null") are key parts
 * of their own to a KV: written as objects, which no key part is.
 */
const oddNumber = (k: Deno.KvKeyPart) =>
  typeof k === "number" && (!Number.isFinite(k) || Object.is(k, -0));
const keyPartSafe = (_k: string, v: unknown) =>
  typeof v === "number" && oddNumber(v)
    ? { number: Object.is(v, -0) ? "-0" : String(v) }
    : bigintSafe(_k, v);

export const keyId = (key: Deno.KvKey): string =>
  // The replacer is only needed for bigints and odd numbers, and calling it per element is most
  // of the cost.
  key.some((k) => typeof k === "bigint" || oddNumber(k))
    ? JSON.stringify(key, keyPartSafe)
    : JSON.stringify(key);

/** The first of `hashes`, alone: what the fingerprint map needs, without the second or an array. */
export function fingerprint(s: string): number {
  let a = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
  return a >>> 0;
}

/**
 * The fingerprint's state after a projection's name: `partsFingerprint` goes on from it, so a
 * fold makes it once per projection instead of hashing the name again on each of millions of
 * touches (a quarter of the fingerprint's time).
 */
export function nameSeed(name: string): number {
  let a = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) a = Math.imul(a ^ name.charCodeAt(i), 0x01000193);
  return a;
}

/**
 * A 32-bit fingerprint of the projection key `[...PROJECTIONS, name, ...sub]` made from its parts,
 * without building the key or its id (the fold takes one per touch, millions of them); `seed` is
 * `nameSeed(name)`. Not the fingerprint of `keyId`: only ever compared with itself.
 */
export function partsFingerprint(seed: number, sub: Deno.KvKey): number {
  let a = seed;
  for (let j = 0; j < sub.length; j++) {
    const p = sub[j];
    if (typeof p === "string") {
      a = Math.imul(a ^ 0x100, 0x01000193);
      for (let i = 0; i < p.length; i++) a = Math.imul(a ^ p.charCodeAt(i), 0x01000193);
    } else if (typeof p === "number" && (p | 0) === p) {
      a = Math.imul(a ^ 0x101, 0x01000193);
      a = Math.imul(a ^ (p & 0xffff), 0x01000193);
      a = Math.imul(a ^ (p >>> 16), 0x01000193);
    } else {
      const s = p instanceof Uint8Array ? [...p].join(",") : String(p);
      const tag = p instanceof Uint8Array
        ? 0x105
        : typeof p === "bigint"
        ? 0x103
        : typeof p === "boolean"
        ? 0x104
        : 0x102;
      a = Math.imul(a ^ tag, 0x01000193);
      for (let i = 0; i < s.length; i++) a = Math.imul(a ^ s.charCodeAt(i), 0x01000193);
    }
  }
  return a >>> 0;
}

/** Two independent 32-bit FNV-1a style hashes of a string; the second is odd, never 0. */
export function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b | 1) >>> 0];
}

/**
 * A Bloom filter over key ids (4 MiB, 4 probes): about 2 false positives in 10^4 at a million
 * ids. It never answers "no" for an id that was added.
 */
export class KeyBloomFilter {
  readonly #bits = new Uint32Array(1 << 20);
  readonly #mask = (1 << 25) - 1;

  add(id: string): void {
    const [h1, h2] = hashes(id);
    this.#set(h1, h2);
  }

  #set(h1: number, h2: number): void {
    for (let i = 0; i < 4; i++) {
      const b = (h1 + i * h2) & this.#mask;
      this.#bits[b >>> 5] |= 1 << (b & 31);
    }
  }

  /**
   * `add` for an id given as its UTF-8 bytes (an ASCII id's bytes are its char codes, so the
   * same bits are set); `decode` makes the string for any other.
   */
  addBytes(id: Uint8Array, decode: () => string): void {
    let a = 0x811c9dc5;
    let b = 0x01000193 ^ id.length;
    for (let i = 0; i < id.length; i++) {
      const c = id[i];
      if (c >= 0x80) return this.add(decode());
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    this.#set(a >>> 0, (b | 1) >>> 0);
  }

  has(id: string): boolean {
    const [h1, h2] = hashes(id);
    for (let i = 0; i < 4; i++) {
      const b = (h1 + i * h2) & this.#mask;
      if ((this.#bits[b >>> 5] & (1 << (b & 31))) === 0) return false;
    }
    return true;
  }

  /** The filter's bits, to store (the audit keeps it in its state). */
  get bytes(): Uint8Array {
    return new Uint8Array(this.#bits.buffer);
  }

  static fromBytes(bytes: Uint8Array): KeyBloomFilter {
    const f = new KeyBloomFilter();
    f.bytes.set(bytes.subarray(0, f.bytes.length));
    return f;
  }
}

/**
 * An approximate set of 32-bit fingerprints (a Bloom filter, two probes, about 8 bits for each
 * fingerprint it is sized for): `add` tells whether the fingerprint was (probably) there already.
 * It never answers "new" for one it was given; past its size it answers "there" more often.
 */
export class FingerprintFilter {
  readonly #bits: Uint32Array;
  readonly #mask: number;

  constructor(expected: number) {
    // 8 KiB to 16 MiB: past about 8 million first touches more of them pass for seen, which only
    // puts more into the last-touch maps.
    const bits = 1 << Math.min(27, Math.max(16, Math.ceil(Math.log2(Math.max(1, expected) * 8))));
    this.#bits = new Uint32Array(bits >>> 5);
    this.#mask = bits - 1;
  }

  /** Adds `f`; true when it was (probably) there already. */
  add(f: number): boolean {
    const a = f & this.#mask;
    // The second probe from a remix of the fingerprint's bits, so the two differ for most.
    const b = (Math.imul(f ^ (f >>> 16), 0x45d9f3b) ^ (f >>> 13)) & this.#mask;
    const wa = a >>> 5, ba = 1 << (a & 31), wb = b >>> 5, bb = 1 << (b & 31);
    const there = (this.#bits[wa] & ba) !== 0 && (this.#bits[wb] & bb) !== 0;
    this.#bits[wa] |= ba;
    this.#bits[wb] |= bb;
    return there;
  }
}

/**
 * Key ids to positive numbers (below 2^32), by a 32-bit fingerprint of the id: open addressing,
 * 8 bytes a slot, doubling at three quarters full. Ids that share a fingerprint (about n²/2^33
 * pairs: a few hundred at 2 million keys) share one entry, so callers must only ever be slower,
 * never wrong, when that happens.
 */
export class KeyFingerprintMap {
  #fingerprints: Uint32Array;
  /** 0 marks an empty slot, which is why values must be positive. */
  #values: Uint32Array;
  #mask: number;
  size = 0;

  constructor(initialSlots = 1 << 16) {
    const slots = 1 << Math.ceil(Math.log2(Math.max(16, initialSlots)));
    this.#fingerprints = new Uint32Array(slots);
    this.#values = new Uint32Array(slots);
    this.#mask = slots - 1;
  }

  /** The map's arrays, to send to another thread (`from` makes the map again there). */
  get parts(): { fingerprints: Uint32Array; values: Uint32Array; size: number } {
    return { fingerprints: this.#fingerprints, values: this.#values, size: this.size };
  }

  static from(fingerprints: Uint32Array, values: Uint32Array, size: number): KeyFingerprintMap {
    const m = new KeyFingerprintMap(16);
    m.#fingerprints = fingerprints;
    m.#values = values;
    m.#mask = values.length - 1;
    m.size = size;
    return m;
  }

  get(id: string): number | undefined {
    return this.getFingerprint(fingerprint(id));
  }

  /** `get` by a fingerprint the caller made (`partsFingerprint`). */
  getFingerprint(f: number): number | undefined {
    const i = this.#slot(f);
    return this.#values[i] === 0 ? undefined : this.#values[i];
  }

  /** Keeps the larger of the value there and `value` (a positive integer). */
  setMax(id: string, value: number): void {
    this.setMaxFingerprint(fingerprint(id), value);
  }

  /** `setMax` by a fingerprint the caller made (`partsFingerprint`). */
  setMaxFingerprint(f: number, value: number): void {
    const i = this.#slot(f);
    if (this.#values[i] !== 0) {
      if (value > this.#values[i]) this.#values[i] = value;
      return;
    }
    this.#fingerprints[i] = f;
    this.#values[i] = value;
    if (++this.size * 4 > (this.#mask + 1) * 3) this.#grow();
  }

  /** The slot holding this fingerprint, or the empty one where it would go. */
  #slot(f: number): number {
    let i = f & this.#mask;
    while (this.#values[i] !== 0 && this.#fingerprints[i] !== f) i = (i + 1) & this.#mask;
    return i;
  }

  #grow(): void {
    const [fingerprints, values] = [this.#fingerprints, this.#values];
    this.#fingerprints = new Uint32Array(fingerprints.length * 2);
    this.#values = new Uint32Array(values.length * 2);
    this.#mask = this.#values.length - 1;
    for (let j = 0; j < values.length; j++) {
      if (values[j] === 0) continue;
      const i = this.#slot(fingerprints[j]);
      this.#fingerprints[i] = fingerprints[j];
      this.#values[i] = values[j];
    }
  }
}
