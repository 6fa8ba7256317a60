/**
 * Byte encodings the RPC surface needs. Encoding is bs58's; decoding is implemented here because
 * the RPC must reject bad input with the node's exact error kinds, which needs to know *why*
 * decoding failed.
 */
import bs58 from "bs58";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const MAP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) MAP[ALPHABET.charCodeAt(i)] = i;

export const base58Encode = (bytes: Uint8Array): string => bs58.encode(bytes);

export class DecodeError extends Error {
  override name = "DecodeError";
}

/** Throws DecodeError with the bs58 crate's Debug text, e.g. `InvalidCharacter { character: 'l', index: 3 }`. */
export function base58Decode(s: string): Uint8Array {
  let zeros = 0;
  while (zeros < s.length && s[zeros] === "1") zeros++;
  const bytes: number[] = [];
  for (let i = zeros; i < s.length; i++) {
    const code = s.charCodeAt(i);
    const v = code < 128 ? MAP[code] : -1;
    if (v < 0) {
      throw new DecodeError(`InvalidCharacter { character: '${s[i]}', index: ${i} }`);
    }
    let carry = v;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j] * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[out.length - 1 - i] = bytes[i];
  return out;
}

const B64_CHARS = /^[A-Za-z0-9+/]*$/;

/** Strict standard base64 (with padding), failing like Rust's base64 crate does. */
export function base64Decode(s: string): Uint8Array {
  const body = s.replace(/=+$/, "");
  const padding = s.length - body.length;
  for (let i = 0; i < body.length; i++) {
    if (!B64_CHARS.test(body[i])) {
      throw new DecodeError(`InvalidByte(${i}, ${body.charCodeAt(i)})`);
    }
  }
  if (padding > 2 || (s.length % 4 !== 0) || body.length % 4 === 1) {
    if (body.length % 4 === 1) throw new DecodeError(`InvalidLength(${body.length})`);
    throw new DecodeError("InvalidPadding");
  }
  return new Uint8Array(Buffer.from(body, "base64"));
}

export function base64Encode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

export function sha256(...parts: (Uint8Array | string)[]): Uint8Array {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  let len = 0;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export function readU64(data: Uint8Array, offset: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
}

export function readU32(data: Uint8Array, offset: number): number {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(offset, true);
}

export function u32le(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
}

export function u64le(n: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n, true);
  return b;
}
