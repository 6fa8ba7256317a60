/** The bytes of a legacy wire transaction, taken apart without re-serialising anything. */
import bs58 from "bs58";

export interface WireTransaction {
  signatures: Uint8Array[];
  message: Uint8Array;
}

function shortVec(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const b = bytes[offset + i];
    if (b === undefined) throw new Error("truncated");
    value |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) return [value, offset + i + 1];
  }
  throw new Error("bad length prefix");
}

/** Throws on anything that is not a well-formed legacy transaction. */
export function splitWireTransaction(bytes: Uint8Array): WireTransaction {
  const [count, start] = shortVec(bytes, 0);
  if (count < 1 || count > 12) throw new Error("bad signature count");
  const sigEnd = start + 64 * count;
  if (bytes.length <= sigEnd + 3) throw new Error("truncated");
  const message = bytes.subarray(sigEnd);
  if (message[0] & 0x80) {
    throw new Error("versioned transactions are not accepted; we build legacy");
  }
  if (message[0] !== count) throw new Error("signature count does not match the message header");
  const signatures = [];
  for (let i = 0; i < count; i++) {
    signatures.push(bytes.subarray(start + 64 * i, start + 64 * (i + 1)));
  }
  return { signatures, message };
}

export const signatureString = (sig: Uint8Array) => bs58.encode(sig);

/**
 * The first account key of a legacy message is the fee payer. Throws when the message is too
 * short for the key count it claims (up to 2^21 - 1 in three bytes, so the count alone must not
 * size any work).
 */
export function messageAccountKeys(message: Uint8Array): string[] {
  const [n, off] = shortVec(message, 3);
  if (off + 32 * n > message.length) throw new Error("truncated account keys");
  const keys = [];
  for (let i = 0; i < n; i++) {
    keys.push(bs58.encode(message.subarray(off + 32 * i, off + 32 * (i + 1))));
  }
  return keys;
}
