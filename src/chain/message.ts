/**
 * Wire-format transactions: parsing (legacy and v0), the sanitize rules the node applies before
 * anything else, and serialization of rebuilt legacy messages for the segment executor.
 */
import { base58Encode } from "./codec.ts";

export interface CompiledIx {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

export interface AddressTableLookup {
  accountKey: Uint8Array;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

export interface MessageHeader {
  numRequiredSignatures: number;
  numReadonlySignedAccounts: number;
  numReadonlyUnsignedAccounts: number;
}

export interface ParsedTransaction {
  wire: Uint8Array;
  signatures: Uint8Array[];
  messageBytes: Uint8Array;
  version: "legacy" | 0;
  header: MessageHeader;
  staticKeys: Uint8Array[];
  recentBlockhash: Uint8Array;
  /** Where the recent blockhash sits in `wire` (for replaceRecentBlockhash). */
  blockhashOffset: number;
  instructions: CompiledIx[];
  lookups: AddressTableLookup[];
}

/** Transaction plus the addresses its lookup tables resolved to. */
export interface ResolvedTransaction extends ParsedTransaction {
  keys: Uint8Array[];
  keyStrings: string[];
  loadedWritable: string[];
  loadedReadonly: string[];
  signature: string;
}

export class WireError extends Error {
  override name = "WireError";
}

class Reader {
  off = 0;
  constructor(readonly buf: Uint8Array) {}
  u8(): number {
    if (this.off >= this.buf.length) throw new WireError("io error: unexpected end of file");
    return this.buf[this.off++];
  }
  bytes(n: number): Uint8Array {
    if (this.off + n > this.buf.length) {
      throw new WireError("io error: unexpected end of file");
    }
    const out = this.buf.subarray(this.off, this.off + n);
    this.off += n;
    return out;
  }
  shortVec(): number {
    let len = 0;
    for (let i = 0; i < 3; i++) {
      const b = this.u8();
      len |= (b & 0x7f) << (i * 7);
      if ((b & 0x80) === 0) {
        if (i > 0 && b === 0) throw new WireError("invalid value: short u16 non-canonical");
        return len;
      }
    }
    throw new WireError("invalid value: short u16 overflow");
  }
}

export function parseTransaction(wire: Uint8Array): ParsedTransaction {
  const r = new Reader(wire);
  const sigCount = r.shortVec();
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < sigCount; i++) signatures.push(r.bytes(64));
  const msgStart = r.off;
  let version: "legacy" | 0 = "legacy";
  const first = r.u8();
  let h0 = first;
  if (first & 0x80) {
    const v = first & 0x7f;
    if (v !== 0) throw new WireError(`invalid value: integer \`${v}\`, expected a valid version`);
    version = 0;
    h0 = r.u8();
  }
  const header: MessageHeader = {
    numRequiredSignatures: h0,
    numReadonlySignedAccounts: r.u8(),
    numReadonlyUnsignedAccounts: r.u8(),
  };
  const keyCount = r.shortVec();
  const staticKeys: Uint8Array[] = [];
  for (let i = 0; i < keyCount; i++) staticKeys.push(r.bytes(32));
  const blockhashOffset = r.off;
  const recentBlockhash = r.bytes(32);
  const ixCount = r.shortVec();
  const instructions: CompiledIx[] = [];
  for (let i = 0; i < ixCount; i++) {
    const programIdIndex = r.u8();
    const n = r.shortVec();
    const accounts = Array.from(r.bytes(n));
    const dataLen = r.shortVec();
    instructions.push({ programIdIndex, accounts, data: r.bytes(dataLen) });
  }
  const lookups: AddressTableLookup[] = [];
  if (version === 0) {
    const n = r.shortVec();
    for (let i = 0; i < n; i++) {
      const accountKey = r.bytes(32);
      const w = r.shortVec();
      const writableIndexes = Array.from(r.bytes(w));
      const ro = r.shortVec();
      lookups.push({ accountKey, writableIndexes, readonlyIndexes: Array.from(r.bytes(ro)) });
    }
  }
  return {
    wire: wire.subarray(0, r.off),
    signatures,
    messageBytes: wire.subarray(msgStart, r.off),
    version,
    header,
    staticKeys,
    recentBlockhash,
    blockhashOffset,
    instructions,
    lookups,
  };
}

/** The node's `sanitize()`: returns false for what it reports as SanitizeFailure. */
export function sanitize(tx: ParsedTransaction): boolean {
  const h = tx.header;
  const nStatic = tx.staticKeys.length;
  if (tx.signatures.length !== h.numRequiredSignatures) return false;
  if (h.numRequiredSignatures === 0) return false;
  if (h.numRequiredSignatures > nStatic) return false;
  if (h.numReadonlySignedAccounts >= h.numRequiredSignatures) return false;
  if (h.numReadonlyUnsignedAccounts > nStatic - h.numRequiredSignatures) return false;
  let loaded = 0;
  for (const l of tx.lookups) {
    if (l.writableIndexes.length + l.readonlyIndexes.length === 0) return false;
    loaded += l.writableIndexes.length + l.readonlyIndexes.length;
  }
  const total = nStatic + loaded;
  if (total > 256) return false;
  for (const ix of tx.instructions) {
    // Programs can only be static keys and never the fee payer.
    if (ix.programIdIndex === 0 || ix.programIdIndex >= nStatic) return false;
    for (const a of ix.accounts) if (a >= total) return false;
  }
  return true;
}

export function isSigner(tx: ParsedTransaction, i: number): boolean {
  return i < tx.header.numRequiredSignatures;
}

/** Writability as requested by the message (before the runtime demotes program ids). */
export function isWritable(tx: ParsedTransaction, i: number): boolean {
  const h = tx.header;
  const nStatic = tx.staticKeys.length;
  if (i < h.numRequiredSignatures) return i < h.numRequiredSignatures - h.numReadonlySignedAccounts;
  if (i < nStatic) return i < nStatic - h.numReadonlyUnsignedAccounts;
  const nLoadedWritable = tx.lookups.reduce((n, l) => n + l.writableIndexes.length, 0);
  return i < nStatic + nLoadedWritable;
}

export function keyString(k: Uint8Array): string {
  return base58Encode(k);
}

function shortVec(n: number): number[] {
  const out: number[] = [];
  let rem = n;
  for (;;) {
    let b = rem & 0x7f;
    rem >>= 7;
    if (rem === 0) {
      out.push(b);
      return out;
    }
    b |= 0x80;
    out.push(b);
  }
}

export interface LegacyMessageInput {
  header: MessageHeader;
  keys: Uint8Array[];
  recentBlockhash: Uint8Array;
  instructions: CompiledIx[];
}

export function serializeLegacyMessage(m: LegacyMessageInput): Uint8Array {
  const parts: number[] = [
    m.header.numRequiredSignatures,
    m.header.numReadonlySignedAccounts,
    m.header.numReadonlyUnsignedAccounts,
    ...shortVec(m.keys.length),
  ];
  let size = parts.length + m.keys.length * 32 + 32 + 3;
  for (const ix of m.instructions) size += 1 + 3 + ix.accounts.length + 3 + ix.data.length;
  const out = new Uint8Array(size);
  out.set(parts, 0);
  let off = parts.length;
  for (const k of m.keys) {
    out.set(k, off);
    off += 32;
  }
  out.set(m.recentBlockhash, off);
  off += 32;
  const put = (arr: number[] | Uint8Array) => {
    out.set(arr, off);
    off += arr.length;
  };
  put(shortVec(m.instructions.length));
  for (const ix of m.instructions) {
    put([ix.programIdIndex]);
    put(shortVec(ix.accounts.length));
    put(ix.accounts);
    put(shortVec(ix.data.length));
    put(ix.data);
  }
  return out.subarray(0, off);
}

/** A transaction with all-zero signatures: enough for a runtime whose sigverify is off. */
export function unsignedTransaction(message: Uint8Array, numSignatures: number): Uint8Array {
  const prefix = shortVec(numSignatures);
  const out = new Uint8Array(prefix.length + 64 * numSignatures + message.length);
  out.set(prefix, 0);
  out.set(message, prefix.length + 64 * numSignatures);
  return out;
}
