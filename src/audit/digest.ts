/**
 * An order-independent digest of a set of documents, one per projection: the sum, lane by lane,
 * of a keyed hash of each document's line (`<key>\t<JSON text>`). The rebuilt documents come out
 * of the fold in log order and the live ones out of the KV in key order; equal sets give equal
 * sums. The key is drawn per audit, so nobody who edits the live projections beforehand can pick
 * edits whose hashes cancel out: the hash is BLAKE3 over the secret key followed by the line, a
 * pseudo-random function (blake3-jit, plain JavaScript).
 */
import { hashInto } from "blake3-jit";

const LANES = 8;
const KEY_BYTES = 32;
const encoder = new TextEncoder();

/** A document's JSON text; a value JSON cannot hold (a bigint) is spelled out, never thrown. */
export function docText(doc: unknown): string {
  try {
    return JSON.stringify(doc) ?? "undefined";
  } catch {
    return `unserializable ${String(doc)}`;
  }
}

export class Digests {
  readonly #sums = new Map<string, Uint32Array>();
  #buf = new Uint8Array(4096);
  readonly #hash = new Uint8Array(32);
  readonly #lanes = new Uint32Array(this.#hash.buffer);
  /** Documents added. */
  count = 0;

  /** `key`: the secret every line is hashed behind (the same for both sides of a comparison). */
  constructor(key: Uint8Array) {
    this.#buf.set(key.subarray(0, KEY_BYTES));
  }

  add(fold: string, id: string, doc: unknown): void {
    if (doc === null || doc === undefined) return;
    const line = `${id}\t${docText(doc)}`;
    // UTF-8 takes at most three bytes per UTF-16 unit.
    if (this.#buf.length < KEY_BYTES + line.length * 3) {
      const bigger = new Uint8Array(KEY_BYTES + line.length * 3);
      bigger.set(this.#buf.subarray(0, KEY_BYTES));
      this.#buf = bigger;
    }
    const { written } = encoder.encodeInto(line, this.#buf.subarray(KEY_BYTES));
    hashInto(this.#buf.subarray(0, KEY_BYTES + written), this.#hash);
    let sum = this.#sums.get(fold);
    if (!sum) this.#sums.set(fold, sum = new Uint32Array(LANES));
    for (let i = 0; i < LANES; i++) sum[i] += this.#lanes[i];
    this.count++;
  }

  /** The folds whose sums differ between the two sides. */
  differing(other: Digests): string[] {
    const names = new Set([...this.#sums.keys(), ...other.#sums.keys()]);
    const zero = new Uint32Array(LANES);
    const same = (a: Uint32Array, b: Uint32Array) => a.every((x, i) => x === b[i]);
    return [...names].filter((n) => !same(this.#sums.get(n) ?? zero, other.#sums.get(n) ?? zero))
      .sort();
  }
}

/** A fresh secret for one audit's pair of digests. */
export const digestKey = (): Uint8Array => crypto.getRandomValues(new Uint8Array(KEY_BYTES));
