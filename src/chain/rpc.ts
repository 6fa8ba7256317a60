/**
 * The Solana JSON-RPC methods, with the node's parameter handling, response shapes and error
 * codes, on top of ChainNode.
 */
import { PublicKey } from "@solana/web3.js";
import type { AccountSnap } from "./accounts.ts";
import { type Commitment, FINALIZATION_DEPTH, SLOTS_PER_EPOCH } from "./blocks.ts";
import { base58Decode, base58Encode, base64Decode, base64Encode, DecodeError } from "./codec.ts";
import { computeBudget, transactionFee } from "./fees.ts";
import { INVALID_PARAMS, METHOD_NOT_FOUND, RpcError } from "./jsonrpc.ts";
import { parseTransaction, type ResolvedTransaction, sanitize, WireError } from "./message.ts";
import { type ChainNode, PRIORITIZATION_FEE_SLOTS, ResolveError } from "./node.ts";
import { parseMint, parseTokenAccount, uiTokenAmount } from "./spl-token.ts";
import { txErrorText } from "../solana/tx-error.ts";
import {
  ACCOUNT_ENCODINGS,
  type AccountEncoding,
  type DataSlice,
  encodeTransactionRecord,
  EncodingError,
  innerParsed,
  type TxEncoding,
  uiAccount,
} from "./ui.ts";

export const SOLANA_CORE_VERSION = "2.2.0";
export const FEATURE_SET = 3294202862;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_SIGNATURES_FOR_ADDRESS_LIMIT = 1000;
const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;
const PACKET_DATA_SIZE = 1232;
const MAX_BASE58_SIZE = 1683;
const MAX_BASE64_SIZE = 1644;
const VERSIONED_TX = "solana_transaction::versioned::VersionedTransaction";
const MESSAGE_TYPE = "solana_message::versions::VersionedMessage";

type Config = Record<string, unknown>;

function invalidParams(msg: string): RpcError {
  return new RpcError(INVALID_PARAMS, msg);
}

/** serde's description of an unexpected JSON value. */
function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return `boolean \`${v}\``;
  if (typeof v === "number") {
    return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
  }
  if (typeof v === "string") return `string ${JSON.stringify(v)}`;
  if (Array.isArray(v)) return "sequence";
  return "map";
}

const U64_LIMIT_NUMBER = 2 ** 64;

function typeError(v: unknown, expected: string): RpcError {
  return invalidParams(`Invalid params: invalid type: ${describe(v)}, expected ${expected}.`);
}

class Params {
  constructor(readonly list: unknown[]) {}

  #get(i: number, required: number): unknown {
    if (i >= this.list.length) {
      if (i < required) {
        throw invalidParams(
          `Invalid params: invalid length ${this.list.length}, expected ${required} element${
            required === 1 ? "" : "s"
          }.`,
        );
      }
      return undefined;
    }
    return this.list[i];
  }

  string(i: number, required: number): string {
    const v = this.#get(i, required);
    if (typeof v !== "string") throw typeError(v, "a string");
    return v;
  }

  u64(i: number, required: number): number {
    const v = this.#get(i, required);
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw typeError(v, "u64");
    // Past u64, serde_json reads the number as a float, and says so.
    if (v >= U64_LIMIT_NUMBER) {
      throw invalidParams(`Invalid params: invalid type: floating point \`${v}\`, expected u64.`);
    }
    return v;
  }

  array(i: number, required: number): unknown[] {
    const v = this.#get(i, required);
    if (!Array.isArray(v)) throw typeError(v, "a sequence");
    return v;
  }

  config(i: number): Config {
    const v = this.#get(i, 0);
    if (v === undefined || v === null) return {};
    if (typeof v !== "object" || Array.isArray(v)) throw typeError(v, "struct RpcConfig");
    return v as Config;
  }
}

export function parsePubkey(s: unknown): Uint8Array {
  if (typeof s !== "string") throw typeError(s, "a string");
  if (s.length > 44) throw invalidParams("Invalid param: WrongSize");
  let bytes: Uint8Array;
  try {
    bytes = base58Decode(s);
  } catch {
    throw invalidParams("Invalid param: Invalid");
  }
  if (bytes.length !== 32) throw invalidParams("Invalid param: WrongSize");
  return bytes;
}

function parseSignature(s: unknown): string {
  if (typeof s !== "string") throw typeError(s, "a string");
  if (s.length > 88) throw invalidParams("Invalid param: WrongSize");
  let bytes: Uint8Array;
  try {
    bytes = base58Decode(s);
  } catch {
    throw invalidParams("Invalid param: Invalid");
  }
  if (bytes.length !== 64) throw invalidParams("Invalid param: WrongSize");
  return s;
}

function commitmentOf(cfg: Config, fallback: Commitment = "finalized"): Commitment {
  const c = cfg.commitment;
  if (c === undefined || c === null) return fallback;
  switch (c) {
    case "processed":
    case "recent":
      return "processed";
    case "confirmed":
    case "single":
    case "singleGossip":
      return "confirmed";
    case "finalized":
    case "max":
    case "root":
      return "finalized";
  }
  throw invalidParams(
    `Invalid params: unknown variant \`${c}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`,
  );
}

function accountEncoding(cfg: Config, fallback: AccountEncoding): AccountEncoding {
  const e = cfg.encoding ?? fallback;
  if (!ACCOUNT_ENCODINGS.includes(e as AccountEncoding)) {
    throw invalidParams(
      `Invalid params: unknown variant \`${e}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\`.`,
    );
  }
  return e as AccountEncoding;
}

function dataSlice(cfg: Config): DataSlice | undefined {
  const d = cfg.dataSlice as DataSlice | undefined;
  if (!d) return undefined;
  if (typeof d.offset !== "number" || typeof d.length !== "number") {
    throw typeError(d, "struct UiDataSliceConfig");
  }
  return d;
}

/** Decodes a wire transaction like the node's `decode_and_deserialize`. */
export function decodeWireTransaction(encoded: string, encoding: unknown): Uint8Array {
  const enc = encoding ?? "base58";
  let bytes: Uint8Array;
  if (enc === "base58") {
    if (encoded.length > MAX_BASE58_SIZE) {
      throw invalidParams(
        `base58 encoded ${VERSIONED_TX} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE58_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    try {
      bytes = base58Decode(encoded);
    } catch (e) {
      throw invalidParams(`invalid base58 encoding: ${(e as DecodeError).message}`);
    }
  } else if (enc === "base64") {
    if (encoded.length > MAX_BASE64_SIZE) {
      throw invalidParams(
        `base64 encoded ${VERSIONED_TX} too large: ${encoded.length} bytes (max: encoded/raw ${MAX_BASE64_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    try {
      bytes = base64Decode(encoded);
    } catch (e) {
      throw invalidParams(`invalid base64 encoding: ${(e as DecodeError).message}`);
    }
  } else {
    throw invalidParams(
      `Invalid params: unknown variant \`${enc}\`, expected \`base58\` or \`base64\`.`,
    );
  }
  if (bytes.length > PACKET_DATA_SIZE) {
    throw invalidParams(
      `decoded ${VERSIONED_TX} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`,
    );
  }
  return bytes;
}

export class Rpc {
  constructor(readonly node: ChainNode) {}

  readonly methods: Record<string, (p: Params) => unknown> = {
    getHealth: () => "ok",
    getVersion: () => ({ "feature-set": FEATURE_SET, "solana-core": SOLANA_CORE_VERSION }),
    getGenesisHash: () => this.node.blocks.genesisHash,
    getIdentity: () => ({ identity: this.node.faucet.publicKey.toBase58() }),
    getSlot: (p) => this.#slot(p.config(0)),
    getBlockHeight: (p) => this.#slot(p.config(0)),
    getTransactionCount: (p) => (this.#slot(p.config(0)), this.node.history.transactionCount),
    getFirstAvailableBlock: () => 0,
    minimumLedgerSlot: () => this.node.history.oldestSlot ?? this.node.blocks.slot,
    getEpochSchedule: () => ({
      firstNormalEpoch: 0,
      firstNormalSlot: 0,
      leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
      slotsPerEpoch: SLOTS_PER_EPOCH,
      warmup: false,
    }),
    getEpochInfo: (p) => {
      const slot = this.#slot(p.config(0));
      return {
        absoluteSlot: slot,
        blockHeight: slot,
        epoch: Math.floor(slot / SLOTS_PER_EPOCH),
        slotIndex: slot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH,
        transactionCount: this.node.history.transactionCount,
      };
    },
    getBlockTime: (p) => {
      const slot = p.u64(0, 1);
      const info = this.node.blocks.info(slot);
      if (!info || slot > this.node.blocks.slot) {
        throw new RpcError(-32004, `Block not available for slot ${slot}`);
      }
      return info.blockTime;
    },
    getBlock: (p) => this.#block(p),
    getBlocks: (p) => {
      const start = p.u64(0, 1);
      const cfg = typeof p.list[1] === "number" ? p.config(2) : p.config(1);
      const top = this.#slot(cfg);
      const end = typeof p.list[1] === "number" ? Math.min(p.u64(1, 1), top) : top;
      if (end - start > 500_000) throw invalidParams("Slot range too large; max 500000");
      const first = Math.max(start, this.#firstBlock());
      const out: number[] = [];
      for (let s = first; s <= end; s++) out.push(s);
      return out;
    },
    getLatestBlockhash: (p) => {
      const slot = this.#slot(p.config(0));
      const info = this.node.blocks.info(slot)!;
      return this.#ctx(slot, {
        blockhash: info.blockhash,
        lastValidBlockHeight: this.node.blocks.lastValidBlockHeight(info.blockhash),
      });
    },
    isBlockhashValid: (p) => {
      const hash = p.string(0, 1);
      try {
        if (base58Decode(hash).length !== 32) throw new Error();
      } catch {
        throw invalidParams("Invalid param: Invalid");
      }
      const slot = this.#slot(p.config(1));
      return this.#ctx(slot, this.node.blocks.isBlockhashValid(hash));
    },
    getBalance: (p) => {
      const key = parsePubkey(p.string(0, 1));
      const slot = this.#slot(p.config(1));
      return this.#ctx(slot, this.node.executor.db.get(key)?.lamports ?? 0n);
    },
    getAccountInfo: (p) => {
      const key = parsePubkey(p.string(0, 1));
      const cfg = p.config(1);
      const slot = this.#slot(cfg);
      const enc = accountEncoding(cfg, "binary");
      const acc = this.node.executor.db.get(key);
      return this.#ctx(slot, acc ? this.#uiAccount(acc, enc, dataSlice(cfg)) : null);
    },
    getMultipleAccounts: (p) => {
      const list = p.array(0, 1);
      if (list.length > MAX_MULTIPLE_ACCOUNTS) {
        throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
      }
      const keys = list.map(parsePubkey);
      const cfg = p.config(1);
      const slot = this.#slot(cfg);
      const enc = accountEncoding(cfg, "base64");
      const slice = dataSlice(cfg);
      return this.#ctx(
        slot,
        keys.map((k) => {
          const acc = this.node.executor.db.get(k);
          return acc ? this.#uiAccount(acc, enc, slice) : null;
        }),
      );
    },
    getProgramAccounts: (p) => this.#programAccounts(p),
    getTokenAccountsByOwner: (p) => this.#tokenAccountsByOwner(p),
    getMinimumBalanceForRentExemption: (p) => {
      const len = p.list.length ? p.u64(0, 1) : 0;
      return this.node.executor.db.rentExemptMinimum(len);
    },
    getFeeForMessage: (p) => {
      const encoded = p.string(0, 1);
      const slot = this.#slot(p.config(1));
      let msg: Uint8Array;
      try {
        msg = base64Decode(encoded);
      } catch (e) {
        throw invalidParams(`invalid base64 encoding: ${(e as DecodeError).message}`);
      }
      // A message is a transaction without its signature section.
      const wire = new Uint8Array(msg.length + 1);
      wire[0] = 0;
      wire.set(msg, 1);
      let tx: ResolvedTransaction;
      try {
        tx = this.node.resolve(parseTransaction(wire));
      } catch (e) {
        if (e instanceof WireError) {
          throw invalidParams(`failed to deserialize ${MESSAGE_TYPE}: ${e.message}`);
        }
        if (e instanceof ResolveError) return this.#ctx(slot, null);
        throw e;
      }
      if (!this.node.blocks.isBlockhashValid(base58Encode(tx.recentBlockhash))) {
        return this.#ctx(slot, null);
      }
      return this.#ctx(slot, transactionFee(tx.header.numRequiredSignatures, computeBudget(tx)));
    },
    getRecentPrioritizationFees: (p) => {
      const list = p.list.length ? p.array(0, 0) : [];
      if (list.length > MAX_PRIORITIZATION_FEE_ACCOUNTS) {
        throw invalidParams(`Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ACCOUNTS}`);
      }
      const accounts = list.map((a) => new PublicKey(parsePubkey(a)).toBase58());
      const slot = this.node.blocks.slot;
      return this.node.history.prioritizationFees(
        accounts,
        slot - PRIORITIZATION_FEE_SLOTS + 1,
        slot,
      );
    },
    getSignatureStatuses: (p) => {
      const list = p.array(0, 1);
      if (list.length > MAX_SIGNATURE_STATUSES) {
        throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
      }
      const sigs = list.map(parseSignature);
      const search = p.config(1).searchTransactionHistory === true;
      const blocks = this.node.blocks;
      return this.#ctx(
        blocks.slot,
        sigs.map((s) => {
          const r = this.node.history.recent(s) ?? (search ? this.node.history.get(s) : undefined);
          if (!r) return null;
          const status = blocks.commitmentOf(r.slot);
          return {
            confirmationStatus: status,
            confirmations: status === "finalized" ? null : blocks.slot - r.slot,
            err: r.err,
            slot: r.slot,
            status: r.err === null ? { Ok: null } : { Err: r.err },
          };
        }),
      );
    },
    getTransaction: (p) => {
      const sig = parseSignature(p.string(0, 1));
      const raw = p.list[1];
      // The second parameter may also be a bare encoding string (legacy form).
      const cfg: Config = typeof raw === "string" ? { encoding: raw } : p.config(1);
      const commitment = commitmentOf(cfg);
      if (commitment === "processed") {
        throw invalidParams("Method does not support commitment below `confirmed`");
      }
      const encoding = (cfg.encoding ?? "json") as TxEncoding;
      if (!["json", "jsonParsed", "base64", "base58"].includes(encoding)) {
        throw invalidParams(
          `Invalid params: unknown variant \`${encoding}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\`.`,
        );
      }
      const r = this.node.history.get(sig);
      if (!r || !this.node.blocks.reaches(r.slot, commitment)) return null;
      const maxVersion = cfg.maxSupportedTransactionVersion;
      if (r.tx.version === 0 && (maxVersion === undefined || maxVersion === null)) {
        throw new RpcError(
          -32015,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      return encodeTransactionRecord(r, encoding, maxVersion !== undefined && maxVersion !== null);
    },
    getSignaturesForAddress: (p) => {
      const address = new PublicKey(parsePubkey(p.string(0, 1))).toBase58();
      const cfg = p.config(1);
      const commitment = commitmentOf(cfg);
      if (commitment === "processed") {
        throw invalidParams("Method does not support commitment below `confirmed`");
      }
      this.#checkMinContextSlot(cfg, this.node.blocks.slotAt(commitment));
      const limit = cfg.limit === undefined || cfg.limit === null
        ? MAX_SIGNATURES_FOR_ADDRESS_LIMIT
        : Number(cfg.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_FOR_ADDRESS_LIMIT) {
        throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS_LIMIT}`);
      }
      const before = cfg.before == null ? undefined : parseSignature(cfg.before);
      const until = cfg.until == null ? undefined : parseSignature(cfg.until);
      const blocks = this.node.blocks;
      const maxSlot = blocks.slot - (commitment === "confirmed" ? 1 : FINALIZATION_DEPTH);
      return this.node.history.forAddress(address, { before, until, limit, maxSlot }).map((r) => ({
        blockTime: r.blockTime,
        confirmationStatus: blocks.commitmentOf(r.slot),
        err: r.err,
        memo: r.memo,
        signature: r.signature,
        slot: r.slot,
      }));
    },
    getTokenAccountBalance: (p) => {
      const key = parsePubkey(p.string(0, 1));
      const slot = this.#slot(p.config(1));
      const acc = this.node.executor.db.get(key);
      const t = acc ? parseTokenAccount(acc.data, acc.ownerStr) : null;
      const decimals = t ? this.#mintDecimals(t.mint) : null;
      if (!t || decimals === null) {
        throw invalidParams("Invalid param: not a Token account");
      }
      return this.#ctx(slot, uiTokenAmount(t.amount, decimals));
    },
    getTokenSupply: (p) => {
      const key = parsePubkey(p.string(0, 1));
      const slot = this.#slot(p.config(1));
      const acc = this.node.executor.db.get(key);
      const m = acc ? parseMint(acc.data, acc.ownerStr) : null;
      if (!m) throw invalidParams("Invalid param: not a Token mint");
      return this.#ctx(slot, uiTokenAmount(m.supply, m.decimals));
    },
    requestAirdrop: (p) => {
      const key = parsePubkey(p.string(0, 2));
      const lamports = p.u64(1, 2);
      try {
        return this.node.airdrop(new PublicKey(key), BigInt(lamports));
      } catch (e) {
        throw new RpcError(-32600, `airdrop request failed: ${(e as Error).message}`);
      }
    },
    sendTransaction: (p) => this.#sendTransaction(p),
    simulateTransaction: (p) => this.#simulateTransaction(p),
  };

  call(method: string, params: unknown[]): unknown {
    const m = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    if (!m) throw new RpcError(METHOD_NOT_FOUND, "Method not found");
    return m(new Params(params));
  }

  #ctx<T>(slot: number, value: T): { context: { apiVersion: string; slot: number }; value: T } {
    return { context: { apiVersion: SOLANA_CORE_VERSION, slot }, value };
  }

  /** Slot at the requested commitment, enforcing minContextSlot like the node. */
  #slot(cfg: Config): number {
    const slot = this.node.blocks.slotAt(commitmentOf(cfg));
    this.#checkMinContextSlot(cfg, slot);
    return slot;
  }

  #checkMinContextSlot(cfg: Config, slot: number): void {
    const min = cfg.minContextSlot;
    if (typeof min === "number" && slot < min) {
      throw new RpcError(-32016, "Minimum context slot has not been reached", {
        contextSlot: slot,
      });
    }
  }

  /** Oldest slot whose block we can still describe (transactions or recent blockhash). */
  #firstBlock(): number {
    const oldest = this.node.history.oldestSlot;
    const recent = Math.max(0, this.node.blocks.slot - 299);
    return oldest === null ? recent : Math.min(oldest, recent);
  }

  #block(p: Params): unknown {
    const slot = p.u64(0, 1);
    const raw = p.list[1];
    const cfg: Config = typeof raw === "string" ? { encoding: raw } : p.config(1);
    const commitment = commitmentOf(cfg);
    if (commitment === "processed") {
      throw invalidParams("Method does not support commitment below `confirmed`");
    }
    const blocks = this.node.blocks;
    const info = blocks.info(slot);
    const txs = this.node.history.inSlot(slot);
    if (!blocks.reaches(slot, commitment) || (!info && txs.length === 0)) {
      throw new RpcError(
        -32004,
        `Block not available for slot ${slot}`,
      );
    }
    const encoding = (cfg.encoding ?? "json") as TxEncoding;
    const details = (cfg.transactionDetails ?? "full") as string;
    const maxVersion = cfg.maxSupportedTransactionVersion;
    const withVersion = maxVersion !== undefined && maxVersion !== null;
    if (!withVersion && txs.some((r) => r.tx.version === 0)) {
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    const out: Record<string, unknown> = {
      blockHeight: slot,
      blockTime: info?.blockTime ?? txs[0].blockTime,
      blockhash: this.node.blockhashOf(slot),
      parentSlot: Math.max(0, slot - 1),
      previousBlockhash: slot === 0
        ? this.node.blocks.genesisHash
        : this.node.blockhashOf(slot - 1),
    };
    if (details === "full") {
      out.transactions = txs.map((r) => {
        const { slot: _s, blockTime: _t, ...rest } = encodeTransactionRecord(
          r,
          encoding,
          withVersion,
        );
        return rest;
      });
    } else if (details === "signatures") out.signatures = txs.map((r) => r.signature);
    if (cfg.rewards !== false) out.rewards = [];
    return out;
  }

  #mintDecimals = (mint: string): number | null => {
    const acc = this.node.executor.db.get(base58Decode(mint));
    return acc ? parseMint(acc.data, acc.ownerStr)?.decimals ?? null : null;
  };

  #uiAccount(
    acc: AccountSnap,
    enc: AccountEncoding,
    slice?: DataSlice,
    noMintLookup = false,
  ): Record<string, unknown> {
    try {
      return uiAccount(acc, enc, noMintLookup ? () => null : this.#mintDecimals, slice);
    } catch (e) {
      if (e instanceof EncodingError) throw invalidParams(e.message);
      throw e;
    }
  }

  #programAccounts(p: Params): unknown {
    const program = parsePubkey(p.string(0, 1));
    const cfg = p.config(1);
    const slot = this.#slot(cfg);
    const enc = accountEncoding(cfg, "binary");
    const slice = dataSlice(cfg);
    const filters = (cfg.filters ?? []) as Record<string, unknown>[];
    if (!Array.isArray(filters)) throw typeError(filters, "a sequence");
    const matchers = filters.map((f) => {
      if (typeof f.dataSize === "number") {
        const size = f.dataSize;
        return (d: Uint8Array) => d.length === size;
      }
      const m = f.memcmp as { offset: number; bytes: string; encoding?: string } | undefined;
      if (m && typeof m.offset === "number" && typeof m.bytes === "string") {
        let bytes: Uint8Array;
        try {
          bytes = m.encoding === "base64" ? base64Decode(m.bytes) : base58Decode(m.bytes);
        } catch {
          throw invalidParams(`Invalid param: invalid memcmp bytes`);
        }
        return (d: Uint8Array) =>
          d.length >= m.offset + bytes.length &&
          bytes.every((b, i) => d[m.offset + i] === b);
      }
      throw invalidParams(`Invalid params: unsupported filter ${JSON.stringify(f)}.`);
    });
    const out = [];
    for (const aa of this.node.svm.getProgramAccounts(program)) {
      const a = aa.account();
      const data = a.data();
      if (a.lamports() === 0n || !matchers.every((m) => m(data))) continue;
      const snap = this.node.executor.db.get(aa.address);
      if (!snap) continue;
      out.push({
        account: this.#uiAccount(snap, enc, slice),
        pubkey: base58Encode(aa.address),
      });
    }
    return cfg.withContext ? this.#ctx(slot, out) : out;
  }

  #tokenAccountsByOwner(p: Params): unknown {
    const owner = new PublicKey(parsePubkey(p.string(0, 2))).toBase58();
    const filter = p.list[1] as Record<string, unknown> | undefined;
    if (!filter || typeof filter !== "object") {
      throw typeError(filter, "struct RpcTokenAccountsFilter");
    }
    const cfg = p.config(2);
    const slot = this.#slot(cfg);
    const enc = accountEncoding(cfg, "binary");
    let programs: string[] = [
      "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
      "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
    ];
    let mint: string | undefined;
    if (typeof filter.mint === "string") mint = new PublicKey(parsePubkey(filter.mint)).toBase58();
    else if (typeof filter.programId === "string") {
      const pid = new PublicKey(parsePubkey(filter.programId)).toBase58();
      if (!programs.includes(pid)) {
        throw invalidParams("Invalid param: unrecognized Token program id");
      }
      programs = [pid];
    } else throw invalidParams("Invalid param: expected mint or programId filter");
    const out = [];
    for (const program of programs) {
      for (const aa of this.node.svm.getProgramAccounts(base58Decode(program))) {
        const a = aa.account();
        const t = parseTokenAccount(a.data(), program);
        if (!t || t.owner !== owner || (mint && t.mint !== mint)) continue;
        const snap = this.node.executor.db.get(aa.address);
        if (!snap) continue;
        out.push({ account: this.#uiAccount(snap, enc), pubkey: base58Encode(aa.address) });
      }
    }
    return this.#ctx(slot, out);
  }

  #decodeTransaction(p: Params): { tx: ResolvedTransaction; cfg: Config } {
    const encoded = p.string(0, 1);
    const cfg = p.config(1);
    const wire = decodeWireTransaction(encoded, cfg.encoding);
    let parsed;
    try {
      parsed = parseTransaction(wire);
    } catch (e) {
      if (e instanceof WireError) {
        throw invalidParams(`failed to deserialize ${VERSIONED_TX}: ${e.message}`);
      }
      throw e;
    }
    if (!sanitize(parsed)) {
      throw invalidParams(`invalid transaction: ${txErrorText("SanitizeFailure")}`);
    }
    try {
      return { tx: this.node.resolve(parsed), cfg };
    } catch (e) {
      if (e instanceof ResolveError) {
        throw invalidParams(`invalid transaction: ${txErrorText(e.txError)}`);
      }
      throw e;
    }
  }

  #sendTransaction(p: Params): string {
    const { tx, cfg } = this.#decodeTransaction(p);
    this.#checkMinContextSlot(cfg, this.node.blocks.slot);
    const out = this.node.submit(tx, cfg.skipPreflight === true);
    switch (out.kind) {
      case "signature-failure":
        throw new RpcError(-32003, "Transaction signature verification failure");
      case "preflight-failed":
        throw new RpcError(-32002, `Transaction simulation failed: ${txErrorText(out.err)}`, {
          accounts: null,
          err: out.err,
          innerInstructions: null,
          loadedAccountsDataSize: 0,
          logs: out.exec?.logs ?? [],
          replacementBlockhash: null,
          returnData: out.exec?.returnData ? returnDataJson(out.exec.returnData) : null,
          unitsConsumed: out.exec?.unitsConsumed ?? 0,
        });
    }
    return tx.signature;
  }

  #simulateTransaction(p: Params): unknown {
    const { tx, cfg } = this.#decodeTransaction(p);
    const slot = this.#slot(cfg);
    const sigVerify = cfg.sigVerify === true;
    const replace = cfg.replaceRecentBlockhash === true;
    if (sigVerify && replace) {
      throw invalidParams("sigVerify may not be used with replaceRecentBlockhash");
    }
    if (sigVerify && !this.node.verifySignatures(tx)) {
      throw new RpcError(-32003, "Transaction signature verification failure");
    }
    const accountsCfg = cfg.accounts as { addresses?: unknown; encoding?: unknown } | undefined;
    let capture: Uint8Array[] = [];
    let captureEnc: AccountEncoding = "base64";
    if (accountsCfg && typeof accountsCfg === "object") {
      const addrs = accountsCfg.addresses;
      if (!Array.isArray(addrs)) throw typeError(addrs, "a sequence");
      if (addrs.length > tx.keys.length) {
        throw invalidParams(`Too many accounts provided; max ${tx.keys.length}`);
      }
      capture = addrs.map(parsePubkey);
      captureEnc = accountEncoding(accountsCfg as Config, "base64");
      if (captureEnc === "binary" || captureEnc === "base58") {
        throw invalidParams("base58 encoding not supported");
      }
    }
    const sim = this.node.simulate(tx, { replaceRecentBlockhash: replace, capture });
    const exec = sim.exec;
    return this.#ctx(slot, {
      // Like the node: nothing for a failed simulation, and no mint lookups for parsing.
      accounts: accountsCfg
        ? capture.map((_, i) => {
          const a = sim.captured[i];
          return a && sim.err === null ? this.#uiAccount(a, captureEnc, undefined, true) : null;
        })
        : null,
      err: sim.err,
      innerInstructions: cfg.innerInstructions === true && exec
        ? innerParsed(sim.tx, exec.innerInstructions)
        : null,
      loadedAccountsDataSize: exec ? exec.pre.reduce((n, a) => n + (a?.data.length ?? 0), 0) : 0,
      logs: exec?.logs ?? [],
      replacementBlockhash: sim.replacement,
      returnData: exec?.returnData ? returnDataJson(exec.returnData) : null,
      unitsConsumed: exec?.unitsConsumed ?? 0,
    });
  }
}

function returnDataJson(r: { programId: string; data: Uint8Array }): unknown {
  return { data: [base64Encode(r.data), "base64"], programId: r.programId };
}
