/**
 * API key format `<prefix>_live_<keyId>_<secret>`.
 *
 * The secret is 32 random bytes in base58 followed by a 6-character base58 CRC-32 checksum (as
 * GitHub's token formats do), so a mistyped or truncated key is refused without a database read
 * and secret scanners can recognise our keys. Only HMAC-SHA-256(pepper, secret) is ever stored.
 */
import bs58 from "bs58";
import { toHex } from "../kernel/hashing.ts";

const CHECKSUM_LEN = 6;
const KEY_ID_BYTES = 8;
const SECRET_BYTES = 32;

export interface ParsedKey {
  keyId: string;
  secret: string;
}

/** The shape `newKeyId` gives: anything else names no key, and is never looked up. */
export const isKeyId = (s: string): boolean => /^[0-9a-f]{16}$/.test(s);

export function newKeyId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(KEY_ID_BYTES)));
}

export function newSecret(): string {
  const body = bs58.encode(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
  return body + checksum(body);
}

export const formatKey = (prefix: string, keyId: string, secret: string) =>
  `${prefix}_live_${keyId}_${secret}`;

const SHAPE = /^([a-z0-9]{1,16})_live_([0-9a-f]{16})_([1-9A-HJ-NP-Za-km-z]{40,60})$/;

/** Parses and checks the checksum; null for anything that cannot be one of our keys. */
export function parseKey(prefix: string, raw: string): ParsedKey | null {
  const m = SHAPE.exec(raw);
  if (!m || m[1] !== prefix) return null;
  const secret = m[3];
  const body = secret.slice(0, -CHECKSUM_LEN);
  if (checksum(body) !== secret.slice(-CHECKSUM_LEN)) return null;
  return { keyId: m[2], secret };
}

function checksum(body: string): string {
  const crc = crc32(new TextEncoder().encode(body));
  const bytes = new Uint8Array([crc >>> 24, (crc >>> 16) & 255, (crc >>> 8) & 255, crc & 255]);
  return bs58.encode(bytes).padStart(CHECKSUM_LEN, "1").slice(-CHECKSUM_LEN);
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The server pepper as an HMAC key; created once per process. */
export function importPepper(pepper: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(pepper),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

export async function macSecret(pepper: CryptoKey, secret: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", pepper, new TextEncoder().encode(secret));
  return toHex(new Uint8Array(mac));
}

/**
 * WebCrypto's HMAC verify compares in constant time, so how much of a guessed secret matches
 * never shows in the response time.
 */
export function verifySecret(pepper: CryptoKey, secret: string, macHex: string): Promise<boolean> {
  const mac = new Uint8Array(macHex.length / 2);
  for (let i = 0; i < mac.length; i++) mac[i] = parseInt(macHex.slice(i * 2, i * 2 + 2), 16);
  return crypto.subtle.verify("HMAC", pepper, mac, new TextEncoder().encode(secret));
}
