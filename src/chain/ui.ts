/**
 * Response shapes the node's RPC uses for accounts and confirmed transactions (UiAccount,
 * EncodedTransactionWithStatusMeta) in the encodings clients ask for.
 */
import type { AccountSnap } from "./accounts.ts";
import { base58Encode, base64Encode } from "./codec.ts";
import type { TxRecord } from "./history.ts";
import type { InnerIxGroup } from "./executor.ts";
import { isSigner, isWritable, type ResolvedTransaction } from "./message.ts";
import { parseInstruction } from "./parsed-instructions.ts";
import { isTokenProgram, parseTokenProgramAccount } from "./spl-token.ts";

export type AccountEncoding = "base58" | "base64" | "base64+zstd" | "jsonParsed" | "binary";
export const ACCOUNT_ENCODINGS: AccountEncoding[] = [
  "base58",
  "base64",
  "base64+zstd",
  "jsonParsed",
  "binary",
];

export class EncodingError extends Error {
  override name = "EncodingError";
}

export interface DataSlice {
  offset: number;
  length: number;
}

export function uiAccount(
  a: AccountSnap,
  encoding: AccountEncoding,
  mintDecimals: (mint: string) => number | null,
  slice?: DataSlice,
): Record<string, unknown> {
  const data = slice ? a.data.subarray(slice.offset, slice.offset + slice.length) : a.data;
  let encoded: unknown;
  if (encoding === "jsonParsed" && !slice && isTokenProgram(a.ownerStr)) {
    encoded = parseTokenProgramAccount(a.data, a.ownerStr, mintDecimals);
  }
  if (encoded === undefined || encoded === null) {
    if (encoding === "binary" || encoding === "base58") {
      if (data.length > 128) {
        throw new EncodingError(
          "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
        );
      }
      encoded = encoding === "binary" ? base58Encode(data) : [base58Encode(data), "base58"];
    } else if (encoding === "base64+zstd") {
      throw new EncodingError("base64+zstd encoding is not supported by the embedded chain");
    } else {
      encoded = [base64Encode(data), "base64"];
    }
  }
  return {
    data: encoded,
    executable: a.executable,
    lamports: a.lamports,
    owner: a.ownerStr,
    rentEpoch: a.rentEpoch,
    space: a.data.length,
  };
}

export type TxEncoding = "json" | "jsonParsed" | "base64" | "base58";

function innerJson(groups: InnerIxGroup[]): unknown[] {
  return groups.map((g) => ({
    index: g.index,
    instructions: g.instructions.map((ix) => ({
      accounts: ix.accounts,
      data: base58Encode(ix.data),
      programIdIndex: ix.programIdIndex,
      stackHeight: ix.stackHeight,
    })),
  }));
}

export function innerParsed(tx: ResolvedTransaction, groups: InnerIxGroup[]): unknown[] {
  return groups.map((g) => ({
    index: g.index,
    instructions: g.instructions.map((ix) =>
      parseInstruction(
        tx.keyStrings[ix.programIdIndex],
        ix.accounts.map((i) => tx.keyStrings[i]),
        ix.data,
        ix.stackHeight,
      )
    ),
  }));
}

function statusOf(err: unknown): unknown {
  return err === null ? { Ok: null } : { Err: err };
}

export function encodeTransactionRecord(
  r: TxRecord,
  encoding: TxEncoding,
  withVersion: boolean,
): Record<string, unknown> {
  const tx = r.tx;
  const parsed = encoding === "jsonParsed";
  const meta: Record<string, unknown> = {
    computeUnitsConsumed: r.unitsConsumed,
    err: r.err,
    fee: r.fee,
    innerInstructions: parsed
      ? innerParsed(tx, r.innerInstructions)
      : innerJson(r.innerInstructions),
    logMessages: r.logs,
    postBalances: r.postBalances,
    postTokenBalances: r.postTokenBalances,
    preBalances: r.preBalances,
    preTokenBalances: r.preTokenBalances,
    rewards: [],
    status: statusOf(r.err),
  };
  if (!parsed) meta.loadedAddresses = { readonly: tx.loadedReadonly, writable: tx.loadedWritable };
  if (r.returnData) {
    meta.returnData = {
      programId: r.returnData.programId,
      data: [base64Encode(r.returnData.data), "base64"],
    };
  }
  let transaction: unknown;
  if (encoding === "base64") transaction = [base64Encode(tx.wire), "base64"];
  else if (encoding === "base58") transaction = [base58Encode(tx.wire), "base58"];
  else {transaction = {
      message: messageJson(tx, parsed),
      signatures: tx.signatures.map(base58Encode),
    };}
  const out: Record<string, unknown> = { blockTime: r.blockTime, meta, slot: r.slot, transaction };
  if (withVersion) out.version = tx.version;
  return out;
}

function messageJson(tx: ResolvedTransaction, parsed: boolean): Record<string, unknown> {
  const m: Record<string, unknown> = { recentBlockhash: base58Encode(tx.recentBlockhash) };
  const nStatic = tx.staticKeys.length;
  if (parsed) {
    m.accountKeys = tx.keyStrings.map((pubkey, i) => ({
      pubkey,
      signer: isSigner(tx, i),
      source: i < nStatic ? "transaction" : "lookupTable",
      writable: isWritable(tx, i),
    }));
    m.instructions = tx.instructions.map((ix) =>
      parseInstruction(
        tx.keyStrings[ix.programIdIndex],
        ix.accounts.map((i) => tx.keyStrings[i]),
        ix.data,
        null,
      )
    );
  } else {
    m.accountKeys = tx.keyStrings.slice(0, nStatic);
    m.header = tx.header;
    m.instructions = tx.instructions.map((ix) => ({
      accounts: ix.accounts,
      data: base58Encode(ix.data),
      programIdIndex: ix.programIdIndex,
      stackHeight: null,
    }));
  }
  if (tx.version === 0) {
    m.addressTableLookups = tx.lookups.map((l) => ({
      accountKey: base58Encode(l.accountKey),
      readonlyIndexes: l.readonlyIndexes,
      writableIndexes: l.writableIndexes,
    }));
  }
  return m;
}
