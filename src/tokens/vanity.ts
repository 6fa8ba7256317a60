/**
 * Vanity mint addresses with one signer: the mint is createWithSeed(payer, seed, program) =
 * SHA-256(payer || seed || program), so one try is one SHA-256 of 96 bytes, and the service can
 * grind the seed itself; no mint keypair, no second signer.
 *
 * Why our own SHA-256 here and not a library's: a try must cost well under a microsecond for 4
 * case-insensitive characters (about 700,000 tries on average) to take under 2 s, and a
 * general-purpose hash pays an object, a copy and a call per try (node:crypto does 2-3x fewer
 * tries per second, @noble/hashes fewer still: BENCHMARKS.md). The input is fixed: the 64-byte first block is the payer
 * and the seed, the second block is the program id and the padding (constant), and only the
 * seed's last 8 characters (a hex counter, words 14 and 15) change between tries. So rounds 0-13
 * of the first block and the whole message schedule of the second are computed once per grind.
 * Every match is confirmed with PublicKey.createWithSeed and bs58 before it is returned, so this
 * code can only ever cost tries, never return a wrong address; tests pin it to node:crypto.
 *
 * Prefixes and suffixes are checked on the number: a suffix of k characters is N mod 58^k, a
 * prefix is the top digits of N in base 58, from the hash's leading 64 bits in floating point
 * (candidates near a digit boundary or with a leading zero byte go to the exact check).
 *
 * The work runs in slices of a few milliseconds with a yield to the event loop between them, so
 * other requests are served while a grind runs (Deno Deploy has not offered Workers; slices run
 * everywhere).
 */
import { PublicKey } from "@solana/web3.js";
import bs58 from "bs58";

export const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/** At most this many characters, prefix and suffix together. */
export const MAX_VANITY_CHARS = 4;
/** Seeds are 32 characters: 24 random hex characters, then an 8-hex-digit try counter. */
const SEED_RANDOM_CHARS = 24;

/** Why a prefix or suffix cannot be matched, or null. */
export function vanityCharsProblem(s: string, ignoreCase: boolean): string | null {
  for (const ch of s) {
    if (choicesOf(ch, ignoreCase).length === 0) {
      return `"${ch}" is not a base58 character (base58 has no 0, O, I or l)` +
        (ignoreCase ? "" : "; ignoreCase: true accepts either case where base58 has one");
    }
  }
  return null;
}

/** The base58 digit values a character may stand for. */
function choicesOf(ch: string, ignoreCase: boolean): number[] {
  // Only ASCII has a case here: "ſ" upper-cases to "S" and the Kelvin sign lower-cases to "k".
  if (ch.length !== 1 || ch.charCodeAt(0) > 0x7f) return [];
  const variants = ignoreCase ? new Set([ch, ch.toLowerCase(), ch.toUpperCase()]) : new Set([ch]);
  const out: number[] = [];
  for (const v of variants) {
    const i = v.length === 1 ? BASE58_ALPHABET.indexOf(v) : -1;
    if (i >= 0) out.push(i);
  }
  return out;
}

export interface VanityPattern {
  prefix: string;
  suffix: string;
  ignoreCase: boolean;
}

export interface VanityResult {
  seed: string;
  mint: PublicKey;
  tries: number;
}

export interface GrindOptions {
  /** Give up after this long (ms of `now`). */
  budgetMs: number;
  /** Milliseconds; performance.now by default (a test seam). */
  now?: () => number;
  /** Length of one slice of work before yielding to the event loop. */
  sliceMs?: number;
  /** The random part of the seed (24 hex characters); random by default (a test seam). */
  seedStem?: string;
}

/** Over the time budget: no match found. */
export class VanityTimeout extends Error {
  constructor(readonly tries: number, readonly budgetMs: number) {
    super(`no matching address within ${budgetMs} ms (${tries} tries)`);
  }
}

/**
 * Chance that one try matches (prefix digits are not uniform: a 44-character address starts
 * with one of its first few digits only, so the estimate counts both address lengths).
 */
export function matchProbability(p: VanityPattern): number {
  let suffix = 1;
  for (const ch of p.suffix) suffix *= choicesOf(ch, p.ignoreCase).length / 58;
  if (!p.prefix) return suffix;
  const chars = [...p.prefix];
  const N = 2 ** 256;
  let prob = 0;
  for (const len of [44, 43]) {
    const lo = len === 44 ? 58 ** 43 : 58 ** 42;
    const hi = len === 44 ? N : 58 ** 43;
    const unit = 58 ** (len - chars.length);
    // Sum over every digit combination the prefix allows of the share of [lo, hi) it covers.
    let combos: number[] = [0];
    for (const ch of chars) {
      combos = combos.flatMap((c) => choicesOf(ch, p.ignoreCase).map((d) => c * 58 + d));
    }
    for (const c of combos) {
      const from = Math.max(lo, c * unit), to = Math.min(hi, (c + 1) * unit);
      if (to > from) prob += (to - from) / N;
    }
  }
  return prob * suffix;
}

// SHA-256 round constants and initial state.
const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
const IV = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** The message schedule of one block from its 16 words (in place, 64 entries). */
function schedule(w: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15], b = w[i - 2];
    const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
    const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
    w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
  }
}

/** Rounds [from, to) over state `s` (8 words, in place) with schedule `w`. */
function rounds(s: Int32Array, w: Int32Array, from: number, to: number): void {
  let a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
  for (let i = from; i < to; i++) {
    const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] +
      w[i]) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  s[0] = a, s[1] = b, s[2] = c, s[3] = d, s[4] = e, s[5] = f, s[6] = g, s[7] = h;
}

const wordsOf = (bytes: Uint8Array, at: number, n: number): number[] =>
  Array.from({ length: n }, (_, i) => {
    const o = at + 4 * i;
    return (bytes[o] << 24) | (bytes[o + 1] << 16) | (bytes[o + 2] << 8) | bytes[o + 3];
  });

/** Two ASCII hex characters of each byte value as one 16-bit big-endian word half. */
const HEX16 = new Int32Array(256).map((_, b) => {
  const h = b.toString(16).padStart(2, "0");
  return (h.charCodeAt(0) << 8) | h.charCodeAt(1);
});

const counterHex = (n: number) => n.toString(16).padStart(8, "0");

/**
 * SHA-256(base || seedStem || hex(counter) || program) for consecutive counters, with the
 * constant parts computed once. `hash(counter, out)` writes the 8 digest words into `out`.
 */
export function seedHasher(base: PublicKey, seedStem: string, program: PublicKey) {
  const block1 = new Uint8Array(64);
  block1.set(base.toBytes(), 0);
  block1.set(new TextEncoder().encode(seedStem + "00000000"), 32);
  const w1 = new Int32Array(64);
  w1.set(wordsOf(block1, 0, 16));
  // Rounds 0-13 read words 0-13 only, which no try changes.
  const mid = new Int32Array(IV);
  rounds(mid, w1, 0, 14);
  // Block 2: the program id, 0x80, zeros, and the length (96 bytes = 768 bits): constant.
  const block2 = new Uint8Array(64);
  block2.set(program.toBytes(), 0);
  block2[32] = 0x80;
  new DataView(block2.buffer).setUint32(60, 768);
  const w2 = new Int32Array(64);
  w2.set(wordsOf(block2, 0, 16));
  schedule(w2);
  const s = new Int32Array(8);
  const h1 = new Int32Array(8);
  return (counter: number, out: Int32Array): void => {
    w1[14] = (HEX16[(counter >>> 24) & 255] << 16) | HEX16[(counter >>> 16) & 255];
    w1[15] = (HEX16[(counter >>> 8) & 255] << 16) | HEX16[counter & 255];
    schedule(w1);
    s.set(mid);
    rounds(s, w1, 14, 64);
    for (let i = 0; i < 8; i++) h1[i] = (IV[i] + s[i]) | 0;
    s.set(h1);
    rounds(s, w2, 0, 64);
    for (let i = 0; i < 8; i++) out[i] = (h1[i] + s[i]) | 0;
  };
}

const P58_42 = 58 ** 42, P58_43 = 58 ** 43;
const TWO32 = 2 ** 32, TWO192 = 2 ** 192;

/** A matcher over digest words: `true` for a likely match (confirmed exactly afterwards). */
export function fastMatcher(p: VanityPattern): (h: Int32Array) => boolean {
  const pre = [...p.prefix].map((ch) => choicesOf(ch, p.ignoreCase));
  const suf = [...p.suffix].map((ch) => choicesOf(ch, p.ignoreCase));
  const allowed = (sets: number[][]) =>
    sets.map((set) => {
      const ok = new Uint8Array(58);
      for (const d of set) ok[d] = 1;
      return ok;
    });
  const preOk = allowed(pre), sufOk = allowed(suf);
  const k = pre.length, j = suf.length;
  const sufMod = 58 ** j;
  // N mod 58^j as a sum of 16-bit halves times (2^(16 i) mod 58^j): each product is below
  // 2^16 * 58^4 < 2^40 and the 16 of them below 2^44, exact in a double; one % at the end.
  const weight = new Float64Array(16);
  for (let i = 0, c = 1; i < 16; i++, c = (c * 65536) % sufMod) weight[15 - i] = c;
  return (h) => {
    if (j > 0) {
      let sum = 0;
      for (let i = 0; i < 8; i++) {
        const w = h[i] >>> 0;
        sum += (w >>> 16) * weight[2 * i] + (w & 0xffff) * weight[2 * i + 1];
      }
      let r = sum % sufMod;
      for (let i = j - 1; i >= 0; i--) {
        if (!sufOk[i][r % 58]) return false;
        r = Math.floor(r / 58);
      }
    }
    if (k === 0) return true;
    const top = h[0] >>> 0;
    // A leading zero byte ('1' in base58) or a short address: leave it to the exact check.
    if (top < 0x1000000) return true;
    const n = (top * TWO32 + (h[1] >>> 0)) * TWO192;
    if (n < P58_42) return true;
    const len = n >= P58_43 ? 44 : 43;
    const t = n / 58 ** (len - k);
    let d = Math.floor(t);
    const frac = t - d;
    // Too near a digit boundary for 53 bits to tell: the exact check decides.
    if (frac < 1e-6 || frac > 1 - 1e-6) return true;
    for (let i = k - 1; i >= 0; i--) {
      if (!preOk[i][d % 58]) return false;
      d = Math.floor(d / 58);
    }
    return true;
  };
}

/** Whether an address really has the prefix and suffix. */
export function addressMatches(address: string, p: VanityPattern): boolean {
  const norm = (s: string) => p.ignoreCase ? s.toLowerCase() : s;
  return norm(address).startsWith(norm(p.prefix)) && norm(address).endsWith(norm(p.suffix));
}

const digestBytes = (h: Int32Array): Uint8Array => {
  const out = new Uint8Array(32);
  const v = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) v.setInt32(4 * i, h[i]);
  return out;
};

const randomStem = () =>
  Array.from(
    crypto.getRandomValues(new Uint8Array(SEED_RANDOM_CHARS / 2)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");

const yieldToEventLoop = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * Grinds seeds until createWithSeed(base, seed, program) matches, in slices that yield to the
 * event loop. Throws VanityTimeout once the budget is spent.
 */
export async function grindVanitySeed(
  base: PublicKey,
  program: PublicKey,
  pattern: VanityPattern,
  opts: GrindOptions,
): Promise<VanityResult> {
  const now = opts.now ?? (() => performance.now());
  const sliceMs = opts.sliceMs ?? 10;
  const stem = opts.seedStem ?? randomStem();
  if (!/^[0-9a-f]{24}$/.test(stem)) throw new Error("seedStem must be 24 hex characters");
  const hash = seedHasher(base, stem, program);
  const likely = fastMatcher(pattern);
  const h = new Int32Array(8);
  const started = now();
  let counter = 0;
  // Check the clock every few thousand tries: cheap, and a slice stays near sliceMs.
  const BATCH = 4096;
  while (now() - started < opts.budgetMs) {
    const sliceEnd = now() + sliceMs;
    do {
      for (const end = counter + BATCH; counter < end; counter++) {
        hash(counter, h);
        if (!likely(h)) continue;
        const address = bs58.encode(digestBytes(h));
        if (!addressMatches(address, pattern)) continue;
        const seed = stem + counterHex(counter);
        // The exact derivation, so the fast path can never hand out a wrong seed.
        const mint = await PublicKey.createWithSeed(base, seed, program);
        if (mint.toBase58() !== address) {
          throw new Error(`vanity hasher disagrees with createWithSeed for seed ${seed}`);
        }
        return { seed, mint, tries: counter + 1 };
      }
    } while (now() < sliceEnd && counter < 0xffff_f000);
    if (counter >= 0xffff_f000) break;
    await yieldToEventLoop();
  }
  throw new VanityTimeout(counter, opts.budgetMs);
}
