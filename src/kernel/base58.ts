/** Solana addresses as users write them: base58 of 32 bytes, in its one canonical spelling. */
import { PublicKey } from "@solana/web3.js";
import bs58 from "bs58";

/**
 * The address, or null when `s` is not canonical base58 of 32 bytes. A key written any other way
 * (leading zeros dropped or added) is almost certainly a copy-paste slip, so it is refused.
 */
export function parseAddress(s: string): PublicKey | null {
  try {
    const k = new PublicKey(s);
    return k.toBase58() === s ? k : null;
  } catch {
    return null;
  }
}

export const isAddress = (s: string): boolean => parseAddress(s) !== null;

/** A transaction signature as written: base58 of 64 bytes. */
export function isSignature(s: string): boolean {
  try {
    return bs58.decode(s).length === 64;
  } catch {
    return false;
  }
}
