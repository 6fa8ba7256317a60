/**
 * Byte encodings shared by the service and the portal page (which bundles this module): base58
 * for Solana keys and signatures (the bs58 package), standard base64 for transactions. Only
 * platform built-ins besides bs58, so the same code runs in Deno and in a browser.
 */
import bs58 from "bs58";

export const base58Encode = (bytes: Uint8Array): string => bs58.encode(bytes);

/** Throws on a character outside the base58 alphabet. */
export const base58Decode = (text: string): Uint8Array => bs58.decode(text);

/** Throws (a DOMException) on text that is not base64. */
export const base64Decode = (b64: string): Uint8Array =>
  Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

export function base64Encode(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin);
}
