/**
 * Deno KV's binary key encoding (denokv's, after FoundationDB's tuple layer), as stored in the
 * `k` column of a KV file: each part a type tag and its bytes, in an order that sorts as the keys
 * do. The audit reads a KV file's rows directly (kv-file.ts) and needs the keys back.
 *
 * Why our own code: Deno exposes the codec only inside `Deno.Kv`, and no npm package carries it
 * for JavaScript. Only what the reader needs: decoding every kind of part, and encoding keys of
 * strings and numbers for range bounds. tests/events/kv-key-codec.test.ts checks both against keys
 * written by Deno KV itself, and kv-order.ts orders numbers by the same double encoding.
 */

const BYTES = 0x01;
const STRING = 0x02;
/** Integers (bigint parts): 0x14 is zero, 0x14 ± n an n-byte magnitude, 0x0b/0x1d longer. */
const NEG_LONG = 0x0b;
const INT_ZERO = 0x14;
const POS_LONG = 0x1d;
const DOUBLE = 0x21;
const FALSE = 0x26;
const TRUE = 0x27;

import { type ByteSink, jsonControl } from "../src/kernel/json-bytes.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** The parts of an encoded key; null when the bytes are not a key. */
export function decodeKvKey(b: Uint8Array): Deno.KvKey | null {
  const key: Deno.KvKeyPart[] = [];
  let i = 0;
  while (i < b.length) {
    const tag = b[i++];
    if (tag === STRING || tag === BYTES) {
      const [raw, next] = escaped(b, i);
      i = next;
      if (tag === BYTES) key.push(raw.slice());
      else key.push(decoder.decode(raw));
    } else if (tag === DOUBLE) {
      if (i + 8 > b.length) return null;
      key.push(decodeDouble(b, i));
      i += 8;
    } else if (tag >= NEG_LONG && tag <= POS_LONG) {
      const int = bigintPart(b, i, tag);
      if (!int) return null;
      key.push(int[0]);
      i = int[1];
    } else if (tag === FALSE) key.push(false);
    else if (tag === TRUE) key.push(true);
    else return null;
  }
  return key;
}

/** A bigint part after its tag: its value and where the next part starts; null if cut short. */
function bigintPart(b: Uint8Array, i: number, tag: number): [bigint, number] | null {
  if (tag === INT_ZERO) return [0n, i];
  const negative = tag < INT_ZERO;
  let n: number;
  if (tag === POS_LONG || tag === NEG_LONG) {
    if (i >= b.length) return null;
    n = negative ? b[i] ^ 0xff : b[i];
    i++;
  } else n = negative ? INT_ZERO - tag : tag - INT_ZERO;
  if (i + n > b.length) return null;
  let v = 0n;
  for (let j = 0; j < n; j++) v = (v << 8n) | BigInt(negative ? b[i + j] ^ 0xff : b[i + j]);
  return [negative ? -v : v, i + n];
}

/**
 * Where the escaped part (a string's or byte string's bytes) starting at `from` ends: the index of
 * its terminating 0x00 (a 0x00 followed by 0xFF stands for a 0x00 inside it); -1 when the key ends
 * first.
 */
export function partEnd(b: Uint8Array, from: number): number {
  for (let end = from; end < b.length; end++) {
    if (b[end] !== 0x00) continue;
    if (b[end + 1] !== 0xff) return end;
    end++;
  }
  return -1;
}

/** The bytes of an escaped part up to its terminating 0x00 (0x00 0xFF stands for a 0x00). */
function escaped(b: Uint8Array, from: number): [Uint8Array, number] {
  const found = partEnd(b, from);
  const end = found < 0 ? b.length : found;
  const after = found < 0 ? b.length : found + 1;
  if (b.subarray(from, end).indexOf(0x00) < 0) return [b.subarray(from, end), after];
  const out: number[] = [];
  for (let j = from; j < end; j++) {
    out.push(b[j]);
    if (b[j] === 0x00) j++;
  }
  return [new Uint8Array(out), after];
}

/**
 * Appends `JSON.stringify` of the decoded key (its `keyId`) as UTF-8 to `out`, straight from the
 * encoded bytes: strings, numbers and booleans. False (with `out` left as it was) for a key with
 * a byte-string or bigint part, or a number JSON cannot tell apart (-0, NaN, the infinities),
 * which `keyId` writes its own way: decode those instead.
 */
export function writeKeyId(b: Uint8Array, out: ByteSink): boolean {
  const start = out.length;
  out.ensure(b.length * 6 + 2);
  out.byte(0x5b); // [
  let i = 0;
  let first = true;
  while (i < b.length) {
    if (!first) out.byte(0x2c);
    first = false;
    const tag = b[i++];
    if (tag === STRING) {
      out.ensure((b.length - i) * 6 + 2);
      const buf = out.buf;
      let o = out.length;
      buf[o++] = 0x22;
      for (; i < b.length; i++) {
        let c = b[i];
        if (c === 0x00) {
          if (b[i + 1] !== 0xff) break;
          i++; // 0x00 0xFF stands for a 0x00 in the string
          c = 0;
        }
        if (c >= 0x20) {
          // UTF-8 bytes past ASCII go as they are: JSON.stringify leaves them unescaped.
          if (c === 0x22 || c === 0x5c) buf[o++] = 0x5c;
          buf[o++] = c;
        } else o = jsonControl(buf, o, c);
      }
      i++; // the terminating 0x00
      buf[o++] = 0x22;
      out.length = o;
    } else if (tag === DOUBLE) {
      if (i + 8 > b.length) break;
      const d = decodeDouble(b, i);
      // -0, NaN and the infinities have ids of their own (key-hash.ts): decoded instead.
      if (!Number.isFinite(d) || Object.is(d, -0)) {
        out.length = start;
        return false;
      }
      out.ascii(String(d));
      i += 8;
    } else if (tag === FALSE) out.ascii("false");
    else if (tag === TRUE) out.ascii("true");
    else {
      out.length = start;
      return false;
    }
  }
  out.byte(0x5d); // ]
  return true;
}

/**
 * A double as a key part stores it (after its tag): big-endian, the sign bit flipped, and every
 * bit flipped for a negative number, so that the bytes sort as the numbers do.
 */
export function encodeDouble(x: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, x);
  if (bytes[0] & 0x80) { for (let i = 0; i < 8; i++) bytes[i] ^= 0xff; }
  else bytes[0] ^= 0x80;
  return bytes;
}

/** Where `decodeDouble` puts a double's bytes back: one buffer, not two objects a number. */
const doubleBytes = new Uint8Array(8);
const doubleView = new DataView(doubleBytes.buffer);

/** The double `encodeDouble` wrote at `b[i..i+8)`. */
function decodeDouble(b: Uint8Array, i: number): number {
  const negative = (b[i] & 0x80) === 0;
  for (let j = 0; j < 8; j++) doubleBytes[j] = negative ? b[i + j] ^ 0xff : b[i + j];
  if (!negative) doubleBytes[0] ^= 0x80;
  return doubleView.getFloat64(0);
}

/** Whether `encodeKvKey` takes `key`: its parts are strings and numbers only. */
export const encodableKey = (key: Deno.KvKey): key is (string | number)[] =>
  key.every((p) => typeof p === "string" || typeof p === "number");

/**
 * A key of strings and numbers, encoded (the bounds of a range read; a key of strings alone is
 * also the prefix every key under it starts with).
 */
export function encodeKvKey(parts: readonly (string | number)[]): Uint8Array {
  const out: number[] = [];
  for (const p of parts) {
    if (typeof p === "number") {
      out.push(DOUBLE, ...encodeDouble(p));
      continue;
    }
    out.push(STRING);
    for (const byte of encoder.encode(p)) {
      out.push(byte);
      if (byte === 0x00) out.push(0xff);
    }
    out.push(0x00);
  }
  return new Uint8Array(out);
}
