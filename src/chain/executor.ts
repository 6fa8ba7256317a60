/**
 * Runs transactions on litesvm. Transactions made only of real programs go to litesvm as they
 * are. Transactions that call the emulated Token Metadata program are split into segments
 * around those instructions: each segment runs in litesvm as its own unsigned transaction
 * (paid by an internal account so the real payer is charged exactly once, by us) and the
 * emulated instructions run in between. Every account of the transaction is snapshotted first
 * and restored on any failure, so the whole transaction stays atomic.
 */
import type {
  FailedTransactionMetadata,
  LiteSvm,
  SimulatedTransactionInfo,
  TransactionMetadata,
} from "litesvm/internal";
import { AccountsDb, AccountSnap, SYSTEM_PROGRAM } from "./accounts.ts";
import { base58Decode, base58Encode, sha256, u32le } from "./codec.ts";
import {
  COMPUTE_BUDGET_IX_UNITS,
  COMPUTE_BUDGET_PROGRAM,
  type ComputeBudget,
  computeBudget,
  transactionFee,
} from "./fees.ts";
import {
  type CompiledIx,
  isSigner,
  isWritable,
  type ResolvedTransaction,
  serializeLegacyMessage,
  unsignedTransaction,
} from "./message.ts";
import {
  type IxAccount,
  runTokenMetadataInstruction,
  TOKEN_METADATA_PROGRAM,
} from "./token-metadata-program.ts";
import { instructionError, type TxErrorJson } from "../solana/tx-error.ts";
import { fromNapiTxError, remapTxError } from "./litesvm-errors.ts";

export interface InnerIx {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number | null;
}

export interface InnerIxGroup {
  index: number;
  instructions: InnerIx[];
}

export interface Execution {
  /** False when the transaction fails before execution and so never makes it into a block. */
  landed: boolean;
  err: TxErrorJson | null;
  fee: bigint;
  logs: string[];
  unitsConsumed: number;
  innerInstructions: InnerIxGroup[];
  returnData: { programId: string; data: Uint8Array } | null;
  budget: ComputeBudget;
  /** Accounts of the transaction (by key index) before and after. */
  pre: (AccountSnap | null)[];
  post: (AccountSnap | null)[];
}

const COMPUTE_BUDGET_BYTES = base58Decode(COMPUTE_BUDGET_PROGRAM);

const SEGMENT_PAYER_LAMPORTS = 1_000_000_000_000_000n;

export class Executor {
  readonly db: AccountsDb;
  /** Pays litesvm's fees for segment transactions so the real payer is charged once, by us. */
  readonly #segmentPayer = sha256("embedded-chain segment payer");
  readonly #emulateMetadata: boolean;

  constructor(readonly svm: LiteSvm, opts: { emulateTokenMetadata: boolean }) {
    this.db = new AccountsDb(svm);
    this.#emulateMetadata = opts.emulateTokenMetadata;
  }

  /**
   * Executes and keeps the result (commit) or executes and puts every account back
   * (simulate). `capture` lists extra accounts whose post-execution state the caller wants.
   */
  execute(
    tx: ResolvedTransaction,
    mode: "commit" | "simulate",
    capture: Uint8Array[] = [],
  ): Execution & { captured: (AccountSnap | null)[] } {
    const budget = computeBudget(tx);
    const fee = transactionFee(tx.header.numRequiredSignatures, budget);
    const pre = tx.keys.map((k) => this.db.get(k));
    const emulated = this.#emulateMetadata &&
      tx.instructions.some((ix) => tx.keyStrings[ix.programIdIndex] === TOKEN_METADATA_PROGRAM);
    const base = { budget, fee, pre };
    if (!emulated && mode === "simulate") return this.#directSimulation(tx, base, capture);
    const result = emulated ? this.#segmented(tx, base) : this.#direct(tx, base);
    const captured = capture.map((k) => this.db.get(k));
    if (mode === "simulate") this.db.restore(tx.keys, pre);
    return { ...result, captured };
  }

  /** litesvm's own simulation: nothing to undo, so it is the cheap path for plain transactions. */
  #directSimulation(
    tx: ResolvedTransaction,
    base: { budget: ComputeBudget; fee: bigint; pre: (AccountSnap | null)[] },
    capture: Uint8Array[],
  ): Execution & { captured: (AccountSnap | null)[] } {
    const r = tx.version === "legacy"
      ? this.svm.simulateLegacyTransaction(tx.wire)
      : this.svm.simulateVersionedTransaction(tx.wire);
    const failed = "err" in r;
    const meta: TransactionMetadata = failed
      ? (r as FailedTransactionMetadata).meta()
      : (r as SimulatedTransactionInfo).meta();
    const after = new Map<string, AccountSnap | null>();
    if (!failed) {
      for (const aa of (r as SimulatedTransactionInfo).postAccounts()) {
        const a = aa.account();
        after.set(
          base58Encode(aa.address),
          a.lamports() === 0n
            ? null
            : new AccountSnap(a.lamports(), a.data(), a.owner(), a.executable(), a.rentEpoch()),
        );
      }
    }
    const postOf = (k: Uint8Array, fallback: () => AccountSnap | null) => {
      const id = base58Encode(k);
      return after.has(id) ? after.get(id)! : fallback();
    };
    return {
      ...base,
      landed: !failed,
      err: failed ? fromNapiTxError((r as FailedTransactionMetadata).err()) : null,
      ...ranAs(meta),
      post: tx.keys.map((k, i) => postOf(k, () => base.pre[i])),
      captured: capture.map((k) => postOf(k, () => this.db.get(k))),
    };
  }

  /** Undoes a committed execution (the node never lands a transaction whose preflight failed). */
  rollback(tx: ResolvedTransaction, exec: Execution): void {
    this.db.restore(tx.keys, exec.pre);
  }

  #direct(
    tx: ResolvedTransaction,
    base: { budget: ComputeBudget; fee: bigint; pre: (AccountSnap | null)[] },
  ): Execution {
    const r = tx.version === "legacy"
      ? this.svm.sendLegacyTransaction(tx.wire)
      : this.svm.sendVersionedTransaction(tx.wire);
    const post = tx.keys.map((k) => this.db.get(k));
    const failed = "err" in r;
    const meta: TransactionMetadata = failed
      ? (r as FailedTransactionMetadata).meta()
      : (r as TransactionMetadata);
    const err = failed ? fromNapiTxError((r as FailedTransactionMetadata).err()) : null;
    // litesvm commits a failed transaction only when it charged the fee, as the node does.
    const landed = !failed || (post[0]?.lamports ?? 0n) !== (base.pre[0]?.lamports ?? 0n);
    return {
      ...base,
      landed,
      err,
      ...ranAs(meta),
      post: landed ? post : base.pre,
    };
  }

  #notLanded(
    base: { budget: ComputeBudget; fee: bigint; pre: (AccountSnap | null)[] },
    err: TxErrorJson,
  ): Execution {
    return {
      ...base,
      landed: false,
      err,
      logs: [],
      unitsConsumed: 0,
      innerInstructions: [],
      returnData: null,
      post: base.pre,
    };
  }

  #segmented(
    tx: ResolvedTransaction,
    base: { budget: ComputeBudget; fee: bigint; pre: (AccountSnap | null)[] },
  ): Execution {
    const { budget, fee, pre } = base;
    const keys = tx.keys;
    if (new Set(tx.keyStrings).size !== keys.length) {
      return this.#notLanded(base, "AccountLoadedTwice");
    }
    const payer = pre[0];
    if (!payer) return this.#notLanded(base, "AccountNotFound");
    if (payer.ownerStr !== SYSTEM_PROGRAM) return this.#notLanded(base, "InvalidAccountForFee");
    const afterFee = payer.lamports - fee;
    if (
      afterFee < 0n ||
      (afterFee > 0n && afterFee < this.db.rentExemptMinimum(payer.data.length))
    ) {
      return this.#notLanded(base, "InsufficientFundsForFee");
    }
    for (const ix of tx.instructions) {
      const program = tx.keyStrings[ix.programIdIndex];
      if (program === TOKEN_METADATA_PROGRAM) continue;
      const acc = pre[ix.programIdIndex];
      if (!acc?.executable) return this.#notLanded(base, "InvalidProgramForExecution");
    }

    this.db.set(keys[0], payer.with({ lamports: afterFee }));
    const layout = segmentLayout(tx, this.#segmentPayer);
    this.#fundSegmentPayer();

    const logs: string[] = [];
    const inner: InnerIxGroup[] = [];
    let units = 0;
    let err: TxErrorJson | null = budget.err;
    let returnData: Execution["returnData"] = null;
    const ixs = tx.instructions;
    const isBudget = (i: number) => budget.budgetIxs.has(i);
    const isEmulated = (i: number) =>
      tx.keyStrings[ixs[i].programIdIndex] === TOKEN_METADATA_PROGRAM;

    let i = 0;
    while (i < ixs.length && err === null) {
      if (isEmulated(i)) {
        const r = runTokenMetadataInstruction(ixAccounts(tx, ixs[i]), ixs[i].data, {
          get: (index) => this.db.get(keys[index]),
          rentExemptMinimum: (len) => this.db.rentExemptMinimum(len),
          cuRemaining: budget.unitLimit - units,
        });
        logs.push(...r.logs);
        units += r.unitsConsumed;
        if (r.err !== null) err = instructionError(i, r.err);
        else for (const w of r.writes) this.db.set(keys[w.index], w.account);
        // A node lists the CPIs of a failed instruction too.
        if (r.innerInstructions.length) {
          inner.push({ index: i, instructions: r.innerInstructions });
        }
        i++;
        continue;
      }
      const run: number[] = [];
      while (i < ixs.length && !isEmulated(i)) run.push(i++);
      const segIxs = run.filter((k) => !isBudget(k));
      const budgetInRun = run.length - segIxs.length;
      const remaining = budget.unitLimit - units - budgetInRun * COMPUTE_BUDGET_IX_UNITS;
      const seg = segIxs.length
        ? this.#runSegment(tx, layout, segIxs, remaining, budget)
        : { logsByIx: [], units: 0, err: null, inner: [], returnData: null };
      // Re-interleave the budget instructions' own log lines where they sat in the original.
      let s = 0;
      for (const k of run) {
        if (isBudget(k)) {
          logs.push(
            `Program ${COMPUTE_BUDGET_PROGRAM} invoke [1]`,
            `Program ${COMPUTE_BUDGET_PROGRAM} success`,
          );
          units += COMPUTE_BUDGET_IX_UNITS;
          continue;
        }
        const chunk = seg.logsByIx[s++];
        if (chunk === undefined) break;
        logs.push(...chunk);
      }
      units += seg.units;
      inner.push(...seg.inner);
      if (seg.returnData) returnData = seg.returnData;
      if (seg.err !== null) err = seg.err;
    }

    if (err === null) err = this.#rentStateViolation(tx, pre);
    if (err !== null) {
      // Failed: nothing but the fee sticks.
      this.db.restore(keys, pre);
      this.db.set(keys[0], payer.with({ lamports: afterFee }));
    }
    return {
      ...base,
      landed: true,
      err,
      logs,
      unitsConsumed: units,
      innerInstructions: inner,
      returnData,
      post: keys.map((k) => this.db.get(k)),
    };
  }

  /**
   * The runtime's end-of-transaction rent check, needed here because the emulated program's
   * writes happen outside litesvm: no account may become rent-paying (0 < lamports < minimum).
   */
  #rentStateViolation(tx: ResolvedTransaction, pre: (AccountSnap | null)[]): TxErrorJson | null {
    for (let i = 0; i < tx.keys.length; i++) {
      if (!isWritable(tx, i)) continue;
      const post = this.db.get(tx.keys[i]);
      if (!post || post.executable) continue;
      const min = this.db.rentExemptMinimum(post.data.length);
      if (post.lamports >= min) continue;
      const before = pre[i];
      const wasRentPaying = before !== null &&
        before.lamports < this.db.rentExemptMinimum(before.data.length);
      const allowed = wasRentPaying && before.data.length === post.data.length &&
        post.lamports <= before.lamports;
      if (!allowed) return { InsufficientFundsForRent: { account_index: i } };
    }
    return null;
  }

  #fundSegmentPayer(): void {
    const acc = this.db.get(this.#segmentPayer);
    if (acc && acc.lamports > SEGMENT_PAYER_LAMPORTS / 2n) return;
    this.db.set(
      this.#segmentPayer,
      new AccountSnap(SEGMENT_PAYER_LAMPORTS, new Uint8Array(0), new Uint8Array(32), false, 0n),
    );
  }

  #runSegment(
    tx: ResolvedTransaction,
    layout: SegmentLayout,
    segIxs: number[],
    unitLimit: number,
    budget: ComputeBudget,
  ): {
    logsByIx: string[][];
    units: number;
    err: TxErrorJson | null;
    inner: InnerIxGroup[];
    returnData: Execution["returnData"];
  } {
    const cb = layout.computeBudgetIndex;
    const prepended: CompiledIx[] = [
      { programIdIndex: cb, accounts: [], data: budgetIx(2, Math.max(0, unitLimit)) },
    ];
    if (budget.heapFrameBytes !== null) {
      prepended.push({
        programIdIndex: cb,
        accounts: [],
        data: budgetIx(1, budget.heapFrameBytes),
      });
    }
    if (budget.loadedAccountsDataSizeLimit !== null) {
      prepended.push({
        programIdIndex: cb,
        accounts: [],
        data: budgetIx(4, budget.loadedAccountsDataSizeLimit),
      });
    }
    const p = prepended.length;
    // The prepended limit instruction consumes its own units too.
    prepended[0].data = budgetIx(2, Math.max(0, unitLimit) + p * COMPUTE_BUDGET_IX_UNITS);
    const instructions = [
      ...prepended,
      ...segIxs.map((k) => {
        const ix = tx.instructions[k];
        return {
          programIdIndex: layout.toSeg[ix.programIdIndex],
          accounts: ix.accounts.map((a) => layout.toSeg[a]),
          data: ix.data,
        };
      }),
    ];
    const message = serializeLegacyMessage({
      header: layout.header,
      keys: layout.keys,
      recentBlockhash: tx.recentBlockhash,
      instructions,
    });
    const r = this.svm.sendLegacyTransaction(
      unsignedTransaction(message, layout.header.numRequiredSignatures),
    );
    const failed = "err" in r;
    const meta: TransactionMetadata = failed
      ? (r as FailedTransactionMetadata).meta()
      : (r as TransactionMetadata);
    const toOrigIx = (k: number) => segIxs[Math.max(0, k - p)];
    const toOrigKey = (k: number) => layout.fromSeg[k];
    const err = failed
      ? remapTxError(fromNapiTxError((r as FailedTransactionMetadata).err()), toOrigIx, toOrigKey)
      : null;
    const allLogs = meta.logs().slice(2 * p);
    const rd = meta.returnData();
    const rdData = rd.data();
    return {
      logsByIx: splitTopLevel(allLogs),
      units: Math.max(0, Number(meta.computeUnitsConsumed()) - p * COMPUTE_BUDGET_IX_UNITS),
      err,
      inner: groupInner(meta, (k) => (k < p ? -1 : toOrigIx(k)), toOrigKey),
      returnData: rdData.length > 0
        ? { programId: base58Encode(rd.programId()), data: rdData }
        : null,
    };
  }
}

function budgetIx(kind: number, value: number): Uint8Array {
  const out = new Uint8Array(5);
  out[0] = kind;
  out.set(u32le(value), 1);
  return out;
}

interface SegmentLayout {
  keys: Uint8Array[];
  header: {
    numRequiredSignatures: number;
    numReadonlySignedAccounts: number;
    numReadonlyUnsignedAccounts: number;
  };
  toSeg: number[];
  fromSeg: number[];
  computeBudgetIndex: number;
}

/**
 * A legacy key layout holding every key of the transaction (lookup-table ones included) with
 * its original signer/writable role, behind the internal segment payer.
 */
function segmentLayout(tx: ResolvedTransaction, segmentPayer: Uint8Array): SegmentLayout {
  const groups: number[][] = [[], [], [], []];
  tx.keys.forEach((_, i) => {
    const s = isSigner(tx, i);
    const w = isWritable(tx, i);
    groups[s ? (w ? 0 : 1) : (w ? 2 : 3)].push(i);
  });
  const order = groups.flat();
  const keys = [segmentPayer, ...order.map((i) => tx.keys[i])];
  const toSeg: number[] = new Array(tx.keys.length);
  const fromSeg: number[] = [0];
  order.forEach((orig, j) => {
    toSeg[orig] = j + 1;
    fromSeg[j + 1] = orig;
  });
  let computeBudgetIndex = tx.keyStrings.indexOf(COMPUTE_BUDGET_PROGRAM);
  let readonlyUnsigned = groups[3].length;
  if (computeBudgetIndex >= 0) computeBudgetIndex = toSeg[computeBudgetIndex];
  else {
    keys.push(COMPUTE_BUDGET_BYTES);
    computeBudgetIndex = keys.length - 1;
    readonlyUnsigned++;
  }
  return {
    keys,
    header: {
      numRequiredSignatures: 1 + groups[0].length + groups[1].length,
      numReadonlySignedAccounts: groups[1].length,
      numReadonlyUnsignedAccounts: readonlyUnsigned,
    },
    toSeg,
    fromSeg,
    computeBudgetIndex,
  };
}

function ixAccounts(tx: ResolvedTransaction, ix: CompiledIx): IxAccount[] {
  return ix.accounts.map((index) => ({
    index,
    key: tx.keys[index],
    keyStr: tx.keyStrings[index],
    isSigner: isSigner(tx, index),
    isWritable: isWritable(tx, index),
  }));
}

/** What a run's metadata tells, the same for a simulation and an execution. */
function ranAs(meta: TransactionMetadata) {
  const rd = meta.returnData();
  const rdData = rd.data();
  return {
    logs: meta.logs(),
    unitsConsumed: Number(meta.computeUnitsConsumed()),
    innerInstructions: groupInner(meta, (i) => i, (i) => i),
    returnData: rdData.length > 0
      ? { programId: base58Encode(rd.programId()), data: rdData }
      : null,
  };
}

const TOP_LEVEL_INVOKE = / invoke \[1\]$/;

/** Splits a log list into one chunk per top-level instruction. */
function splitTopLevel(logs: string[]): string[][] {
  const out: string[][] = [];
  for (const line of logs) {
    if (TOP_LEVEL_INVOKE.test(line) || out.length === 0) out.push([]);
    out[out.length - 1].push(line);
  }
  return out;
}

function groupInner(
  meta: TransactionMetadata,
  ixIndex: (k: number) => number,
  keyIndex: (k: number) => number,
): InnerIxGroup[] {
  const groups: InnerIxGroup[] = [];
  meta.innerInstructions().forEach((list, k) => {
    const index = ixIndex(k);
    if (index < 0 || list.length === 0) return;
    groups.push({
      index,
      instructions: list.map((ii) => {
        const c = ii.instruction();
        return {
          programIdIndex: keyIndex(c.programIdIndex()),
          accounts: Array.from(c.accounts(), keyIndex),
          data: c.data(),
          stackHeight: ii.stackHeight(),
        };
      }),
    });
  });
  return groups;
}
