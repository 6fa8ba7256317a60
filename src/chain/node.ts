/**
 * The validator side of the embedded chain: state (litesvm), blocks, the transaction pipeline
 * (signature, age and duplicate checks, execution, landing), the faucet and the hosted Pyth
 * price account. Everything here is synchronous so no two transactions ever interleave.
 */
import { Account, Clock, LiteSvm } from "litesvm/internal";
import { Keypair, PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";
import { Buffer } from "node:buffer";
import {
  encodePythPriceAccount,
  PYTH_ORACLE_PROGRAM_ID,
  PYTH_PRICE_ACCOUNT_SIZE,
  PYTH_SOL_USD_PRICE_ACCOUNT,
} from "../solana/pyth.ts";
import {
  encodePriceUpdateV2,
  PRICE_UPDATE_V2_SIZE,
  PYTH_RECEIVER_PROGRAM_ID,
  PYTH_SOL_USD_PRICE_FEED_ACCOUNT,
} from "../solana/pyth-receiver.ts";
import { AccountSnap, RENT_EXEMPT_EPOCH } from "./accounts.ts";
import { Blocks, FINALIZATION_DEPTH, SLOTS_PER_EPOCH } from "./blocks.ts";
import { base58Decode, base58Encode, sha256 } from "./codec.ts";
import { type Execution, Executor } from "./executor.ts";
import { noncesToSettle, nonceTransactionValid, settledNonce } from "./nonce.ts";
import { History, type TxRecord } from "./history.ts";
import {
  isWritable,
  keyString,
  type ParsedTransaction,
  parseTransaction,
  type ResolvedTransaction,
} from "./message.ts";
import { collectTokenBalances, parseMint, type RawAccount } from "./spl-token.ts";
import { TOKEN_METADATA_PROGRAM } from "./token-metadata-program.ts";
import type { TokenMetadataProgramInfo } from "./metadata-program-info.ts";
import type { TxErrorJson } from "../solana/tx-error.ts";

const ADDRESS_LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111";
const LOOKUP_TABLE_META_SIZE = 56;
const UPGRADEABLE_LOADER = "BPFLoaderUpgradeab1e11111111111111111111111";
const MEMO_PROGRAMS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;
/** How many recent slots getRecentPrioritizationFees reports (the node's cache size). */
export const PRIORITIZATION_FEE_SLOTS = 150;
const STATUS_CACHE_SLOTS = 300;

export interface NodeOptions {
  tokenMetadataProgramSo?: string;
  /** Wall clock (ms) block times follow; default Date.now (tests inject one). */
  now?: () => number;
  solUsdPrice: number;
  historyLimit: number;
}

export class ResolveError extends Error {
  constructor(readonly txError: TxErrorJson) {
    super(typeof txError === "string" ? txError : JSON.stringify(txError));
  }
}

export type SubmitOutcome =
  | { kind: "landed"; record: TxRecord }
  | { kind: "dropped"; reason: TxErrorJson }
  | { kind: "signature-failure" }
  | { kind: "preflight-failed"; err: TxErrorJson; exec: Execution | null };

export interface SimulationOutcome {
  err: TxErrorJson | null;
  exec: Execution | null;
  captured: (AccountSnap | null)[];
  replacement: { blockhash: string; lastValidBlockHeight: number } | null;
  tx: ResolvedTransaction;
}

export class ChainNode {
  readonly svm: LiteSvm;
  readonly blocks: Blocks;
  readonly history: History;
  readonly executor: Executor;
  readonly faucet = Keypair.generate();
  readonly realTokenMetadata: boolean;
  readonly tokenMetadataProgram: TokenMetadataProgramInfo;
  #solUsd: number;
  #pricePaused = false;
  #epochStart: number;
  readonly #now: () => number;
  #keyCache = new Map<string, KeyObject>();
  #txListeners: ((r: TxRecord) => void)[] = [];
  #writeListeners: ((key: string) => void)[] = [];
  #pythKey = base58Decode(PYTH_SOL_USD_PRICE_ACCOUNT);
  #pythLamports: bigint;
  #feedKey = base58Decode(PYTH_SOL_USD_PRICE_FEED_ACCOUNT);
  #feedLamports: bigint;

  constructor(opts: NodeOptions) {
    this.svm = new LiteSvm();
    // The node does these checks itself (see #preflight); litesvm's versions don't know our blocks.
    this.svm.setSigverify(false);
    this.svm.setBlockhashCheck(false);
    this.svm.setTransactionHistory(0n);
    this.realTokenMetadata = !!opts.tokenMetadataProgramSo;
    this.tokenMetadataProgram = opts.tokenMetadataProgramSo
      ? {
        mode: "loaded",
        path: opts.tokenMetadataProgramSo,
        sha256: createHash("sha256").update(Deno.readFileSync(opts.tokenMetadataProgramSo))
          .digest("hex"),
      }
      : { mode: "emulated" };
    if (opts.tokenMetadataProgramSo) {
      this.svm.addProgramFromFile(
        base58Decode(TOKEN_METADATA_PROGRAM),
        opts.tokenMetadataProgramSo,
      );
    } else {
      this.#placeholderProgram(TOKEN_METADATA_PROGRAM);
    }
    this.#placeholderProgram(PYTH_ORACLE_PROGRAM_ID);
    this.#placeholderProgram(PYTH_RECEIVER_PROGRAM_ID);
    this.executor = new Executor(this.svm, { emulateTokenMetadata: !this.realTokenMetadata });
    this.history = new History(opts.historyLimit);
    this.#now = opts.now ?? Date.now;
    const now = this.#now();
    this.#epochStart = Math.floor(now / 1000);
    this.blocks = new Blocks(sha256(crypto.getRandomValues(new Uint8Array(32))), () => now);
    this.#solUsd = opts.solUsdPrice;
    this.#pythLamports = this.svm.minimumBalanceForRentExemption(BigInt(PYTH_PRICE_ACCOUNT_SIZE));
    this.#feedLamports = this.svm.minimumBalanceForRentExemption(BigInt(PRICE_UPDATE_V2_SIZE));
    this.executor.db.set(
      this.faucet.publicKey.toBytes(),
      new AccountSnap(
        FAUCET_LAMPORTS,
        new Uint8Array(0),
        new Uint8Array(32),
        false,
        RENT_EXEMPT_EPOCH,
      ),
    );
    this.blocks.onSlot(() => this.#onSlot());
    this.#syncClock();
    this.#publishPrice();
  }

  /** An executable program account that looks like a deployed upgradeable program. */
  #placeholderProgram(programId: string): void {
    const id = base58Decode(programId);
    const loader = base58Decode(UPGRADEABLE_LOADER);
    const [programData] = PublicKey.findProgramAddressSync([id], new PublicKey(loader));
    const data = new Uint8Array(36);
    data[0] = 2; // UpgradeableLoaderState::Program
    data.set(programData.toBytes(), 4);
    this.svm.setAccount(id, new Account(1_141_440n, data, loader, true, RENT_EXEMPT_EPOCH));
  }

  onTransaction(fn: (r: TxRecord) => void): void {
    this.#txListeners.push(fn);
  }

  /** Accounts the chain itself rewrites outside transactions (the Pyth price account). */
  onAccountWrite(fn: (key: string) => void): void {
    this.#writeListeners.push(fn);
  }

  advanceSlots(n: number): void {
    this.blocks.advance(n, this.#now());
  }

  /** A transaction is about to land in the current block: the block's time is now at least. */
  #producing(): void {
    const before = this.blocks.current.blockTime;
    this.blocks.touch(this.#now());
    if (this.blocks.current.blockTime !== before) this.#syncClock();
  }

  #onSlot(): void {
    const slot = this.blocks.slot;
    this.#syncClock();
    if (!this.#pricePaused) this.#publishPrice();
    this.history.pruneRecent(slot - STATUS_CACHE_SLOTS, slot - PRIORITIZATION_FEE_SLOTS + 1);
  }

  #syncClock(): void {
    const slot = BigInt(this.blocks.slot);
    const epoch = slot / BigInt(SLOTS_PER_EPOCH);
    this.svm.setClock(
      new Clock(
        slot,
        BigInt(this.#epochStart),
        epoch,
        epoch + 1n,
        BigInt(this.blocks.current.blockTime),
      ),
    );
  }

  // --- Pyth -------------------------------------------------------------------------------

  setSolPrice(usd: number): void {
    this.#solUsd = usd;
    this.#publishPrice();
  }

  pausePricePublishing(paused: boolean): void {
    this.#pricePaused = paused;
    if (!paused) this.#publishPrice();
  }

  get priceState(): { usd: number; paused: boolean } {
    return { usd: this.#solUsd, paused: this.#pricePaused };
  }

  #publishPrice(): void {
    const data = encodePythPriceAccount({
      priceUsd: this.#solUsd,
      publishTime: Math.floor(this.#now() / 1000),
      slot: this.blocks.slot,
      publisher: this.faucet.publicKey.toBytes(),
    });
    this.svm.setAccount(
      this.#pythKey,
      new Account(
        this.#pythLamports,
        data,
        base58Decode(PYTH_ORACLE_PROGRAM_ID),
        false,
        RENT_EXEMPT_EPOCH,
      ),
    );
    // The same price in the pull oracle's SOL/USD price feed account, which real clusters use now.
    this.svm.setAccount(
      this.#feedKey,
      new Account(
        this.#feedLamports,
        encodePriceUpdateV2({
          priceUsd: this.#solUsd,
          publishTime: Math.floor(this.#now() / 1000),
          postedSlot: this.blocks.slot,
          writeAuthority: this.faucet.publicKey.toBytes(),
        }),
        base58Decode(PYTH_RECEIVER_PROGRAM_ID),
        false,
        RENT_EXEMPT_EPOCH,
      ),
    );
    for (const fn of this.#writeListeners) {
      fn(PYTH_SOL_USD_PRICE_ACCOUNT);
      fn(PYTH_SOL_USD_PRICE_FEED_ACCOUNT);
    }
  }

  // --- Transaction pipeline -----------------------------------------------------------------

  /** Resolves lookup-table addresses; throws ResolveError with the node's error kinds. */
  resolve(tx: ParsedTransaction): ResolvedTransaction {
    const writable: Uint8Array[] = [];
    const readonly: Uint8Array[] = [];
    for (const l of tx.lookups) {
      const table = this.executor.db.get(l.accountKey);
      if (!table) throw new ResolveError("AddressLookupTableNotFound");
      if (table.ownerStr !== ADDRESS_LOOKUP_TABLE_PROGRAM) {
        throw new ResolveError("InvalidAddressLookupTableOwner");
      }
      const body = table.data.length - LOOKUP_TABLE_META_SIZE;
      if (body < 0 || body % 32 !== 0) throw new ResolveError("InvalidAddressLookupTableData");
      const count = body / 32;
      const at = (i: number) => {
        if (i >= count) throw new ResolveError("InvalidAddressLookupTableIndex");
        const off = LOOKUP_TABLE_META_SIZE + i * 32;
        return table.data.slice(off, off + 32);
      };
      for (const i of l.writableIndexes) writable.push(at(i));
      for (const i of l.readonlyIndexes) readonly.push(at(i));
    }
    const keys = [...tx.staticKeys, ...writable, ...readonly];
    return {
      ...tx,
      keys,
      keyStrings: keys.map(keyString),
      loadedWritable: writable.map(keyString),
      loadedReadonly: readonly.map(keyString),
      signature: tx.signatures.length ? base58Encode(tx.signatures[0]) : "",
    };
  }

  verifySignatures(tx: ParsedTransaction): boolean {
    for (let i = 0; i < tx.signatures.length; i++) {
      if (!verify(null, tx.messageBytes, this.#publicKey(tx.staticKeys[i]), tx.signatures[i])) {
        return false;
      }
    }
    return true;
  }

  #publicKey(raw: Uint8Array): KeyObject {
    const id = keyString(raw);
    let k = this.#keyCache.get(id);
    if (!k) {
      k = createPublicKey({
        key: Buffer.concat([ED25519_SPKI_PREFIX, raw]),
        format: "der",
        type: "spki",
      });
      if (this.#keyCache.size > 10_000) this.#keyCache.clear();
      this.#keyCache.set(id, k);
    }
    return k;
  }

  /**
   * The bank's checks before execution: blockhash age (or, past it, a valid durable nonce, see
   * nonce.ts), then the status cache.
   */
  #checkAgeAndStatus(tx: ResolvedTransaction): TxErrorJson | null {
    const recent = this.blocks.isBlockhashValid(base58Encode(tx.recentBlockhash));
    if (!recent && !this.#validNonce(tx)) return "BlockhashNotFound";
    if (this.history.recent(tx.signature)) return "AlreadyProcessed";
    return null;
  }

  #validNonce(tx: ResolvedTransaction): boolean {
    const db = this.executor.db;
    return nonceTransactionValid(tx, (i) => db.get(tx.keys[i]), this.blocks.current.blockhash);
  }

  submit(tx: ResolvedTransaction, skipPreflight: boolean): SubmitOutcome {
    this.#producing();
    const sigOk = this.verifySignatures(tx);
    if (!skipPreflight) {
      if (!sigOk) return { kind: "signature-failure" };
      const pre = this.#checkAgeAndStatus(tx);
      if (pre) return { kind: "preflight-failed", err: pre, exec: null };
      // One execution serves as both preflight and the real thing: undone if it fails.
      const exec = this.executor.execute(tx, "commit");
      if (exec.err !== null) {
        if (exec.landed) this.executor.rollback(tx, exec);
        return { kind: "preflight-failed", err: exec.err, exec };
      }
      return { kind: "landed", record: this.#land(tx, exec) };
    }
    // Without preflight the leader silently drops what it cannot land.
    if (!sigOk) return { kind: "dropped", reason: "SignatureFailure" };
    const pre = this.#checkAgeAndStatus(tx);
    if (pre) return { kind: "dropped", reason: pre };
    const exec = this.executor.execute(tx, "commit");
    if (!exec.landed) return { kind: "dropped", reason: exec.err ?? "SanitizeFailure" };
    return { kind: "landed", record: this.#land(tx, exec) };
  }

  simulate(
    tx: ResolvedTransaction,
    opts: { replaceRecentBlockhash: boolean; capture: Uint8Array[] },
  ): SimulationOutcome {
    let replacement: SimulationOutcome["replacement"] = null;
    if (opts.replaceRecentBlockhash) {
      const { blockhash } = this.blocks.current;
      const wire = tx.wire.slice();
      wire.set(base58Decode(blockhash), tx.blockhashOffset);
      tx = this.resolve(parseTransaction(wire));
      replacement = {
        blockhash,
        lastValidBlockHeight: this.blocks.lastValidBlockHeight(blockhash)!,
      };
    }
    const pre = this.#checkAgeAndStatus(tx);
    if (pre) return { err: pre, exec: null, captured: [], replacement, tx };
    const exec = this.executor.execute(tx, "simulate", opts.capture);
    return { err: exec.err, exec, captured: exec.captured, replacement, tx };
  }

  /** A faucet transfer, signed and landed like any other transaction. */
  airdrop(to: PublicKey, lamports: bigint): string {
    this.#producing();
    const t = new Transaction({
      feePayer: this.faucet.publicKey,
      recentBlockhash: this.blocks.current.blockhash,
    }).add(
      SystemProgram.transfer({ fromPubkey: this.faucet.publicKey, toPubkey: to, lamports }),
    );
    t.sign(this.faucet);
    const tx = this.resolve(parseTransaction(new Uint8Array(t.serialize())));
    const exec = this.executor.execute(tx, "commit");
    if (exec.err !== null) {
      if (exec.landed) this.executor.rollback(tx, exec);
      throw new Error(`airdrop failed: ${JSON.stringify(exec.err)}`);
    }
    return this.#land(tx, exec).signature;
  }

  #land(tx: ResolvedTransaction, exec: Execution): TxRecord {
    const db = this.executor.db;
    const failedNonce = exec.err !== null &&
      !this.blocks.isBlockhashValid(base58Encode(tx.recentBlockhash));
    for (const i of noncesToSettle(tx, exec.err === null, failedNonce)) {
      const next = settledNonce(db.get(tx.keys[i]), this.blocks.current.blockhash);
      if (next) {
        db.set(tx.keys[i], next);
        exec.post[i] = next;
      }
    }
    const slotInfo = this.blocks.current;
    const invoked = new Set(tx.instructions.map((ix) => ix.programIdIndex));
    const writable = tx.keyStrings.filter((_, i) => isWritable(tx, i) && !invoked.has(i));
    const mintDecimals = (mint: string): number | null => this.#mintDecimals(tx, exec, mint);
    const record: TxRecord = {
      seq: this.history.nextSeq(),
      signature: tx.signature,
      slot: slotInfo.slot,
      // The block's time, which moves on while later transactions land in the same block.
      get blockTime() {
        return slotInfo.blockTime;
      },
      tx,
      err: exec.err,
      fee: exec.fee,
      preBalances: exec.pre.map((a) => a?.lamports ?? 0n),
      postBalances: exec.post.map((a) => a?.lamports ?? 0n),
      preTokenBalances: collectTokenBalances(exec.pre.map(raw), mintDecimals),
      postTokenBalances: collectTokenBalances(exec.post.map(raw), mintDecimals),
      logs: exec.logs,
      unitsConsumed: exec.unitsConsumed,
      innerInstructions: exec.innerInstructions,
      returnData: exec.returnData,
      memo: extractMemo(tx),
      unitPrice: exec.budget.unitPrice,
      writable,
    };
    this.history.add(record);
    for (const fn of this.#txListeners) fn(record);
    return record;
  }

  /** Decimals from the mint as the transaction left it, else as it was, else current state. */
  #mintDecimals(tx: ResolvedTransaction, exec: Execution, mint: string): number | null {
    const i = tx.keyStrings.indexOf(mint);
    for (const a of i >= 0 ? [exec.post[i], exec.pre[i]] : []) {
      const m = a ? parseMint(a.data, a.ownerStr) : null;
      if (m) return m.decimals;
    }
    const cur = this.executor.db.get(base58Decode(mint));
    return cur ? parseMint(cur.data, cur.ownerStr)?.decimals ?? null : null;
  }

  blockhashOf(slot: number): string {
    return this.blocks.blockhashOf(slot);
  }

  /** Highest slot whose blocks are rooted; used for minimumLedgerSlot and friends. */
  get rootSlot(): number {
    return Math.max(0, this.blocks.slot - FINALIZATION_DEPTH);
  }
}

const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function raw(a: AccountSnap | null): RawAccount | null {
  return a
    ? { lamports: a.lamports, data: a.data, owner: a.ownerStr, executable: a.executable }
    : null;
}

/** The node's memo column: "[len] text" per memo instruction, joined by "; ". */
function extractMemo(tx: ResolvedTransaction): string | null {
  const memos: string[] = [];
  for (const ix of tx.instructions) {
    if (!MEMO_PROGRAMS.has(tx.keyStrings[ix.programIdIndex])) continue;
    memos.push(`[${ix.data.length}] ${new TextDecoder().decode(ix.data)}`);
  }
  return memos.length ? memos.join("; ") : null;
}
