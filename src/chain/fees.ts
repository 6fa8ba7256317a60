/**
 * Compute budget and fee rules of the runtime: what the ComputeBudget instructions request,
 * the default compute unit limit when none is requested, and the fee a transaction pays.
 */
import { readU32, readU64 } from "./codec.ts";
import type { ResolvedTransaction } from "./message.ts";
import { instructionError, type TxErrorJson } from "../solana/tx-error.ts";

export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
export const LAMPORTS_PER_SIGNATURE = 5_000n;
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000;
/** Units a ComputeBudget instruction itself consumes. */
export const COMPUTE_BUDGET_IX_UNITS = 150;

/** Builtins get the small default allocation; everything else (including the SPL programs) 200k. */
const BUILTINS = new Set([
  "11111111111111111111111111111111",
  COMPUTE_BUDGET_PROGRAM,
  "Vote111111111111111111111111111111111111111",
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "LoaderV411111111111111111111111111111111111",
]);

export interface ComputeBudget {
  unitLimit: number;
  /** Micro-lamports per compute unit. */
  unitPrice: bigint;
  heapFrameBytes: number | null;
  loadedAccountsDataSizeLimit: number | null;
  /** Indexes of the ComputeBudget instructions. */
  budgetIxs: Set<number>;
  /** Set when the budget instructions themselves are invalid. */
  err: TxErrorJson | null;
}

export function computeBudget(tx: ResolvedTransaction): ComputeBudget {
  const b: ComputeBudget = {
    unitLimit: 0,
    unitPrice: 0n,
    heapFrameBytes: null,
    loadedAccountsDataSizeLimit: null,
    budgetIxs: new Set(),
    err: null,
  };
  let requestedLimit: number | null = null;
  let builtins = 0;
  let others = 0;
  const seen = new Set<number>();
  tx.instructions.forEach((ix, i) => {
    const program = tx.keyStrings[ix.programIdIndex];
    if (program !== COMPUTE_BUDGET_PROGRAM) {
      if (BUILTINS.has(program)) builtins++;
      else others++;
      return;
    }
    builtins++;
    b.budgetIxs.add(i);
    if (b.err) return;
    const d = ix.data;
    const kind = d[0];
    const okLen = (kind === 1 || kind === 2 || kind === 4)
      ? d.length === 5
      : kind === 3
      ? d.length === 9
      : false;
    if (!okLen) {
      b.err = instructionError(i, "InvalidInstructionData");
      return;
    }
    if (seen.has(kind)) {
      b.err = { DuplicateInstruction: i };
      return;
    }
    seen.add(kind);
    if (kind === 1) {
      const bytes = readU32(d, 1);
      if (bytes % 1024 !== 0 || bytes < 32 * 1024 || bytes > 256 * 1024) {
        b.err = instructionError(i, "InvalidInstructionData");
      }
      b.heapFrameBytes = bytes;
    } else if (kind === 2) requestedLimit = readU32(d, 1);
    else if (kind === 3) b.unitPrice = readU64(d, 1);
    else if (kind === 4) {
      b.loadedAccountsDataSizeLimit = readU32(d, 1);
      if (b.loadedAccountsDataSizeLimit === 0) b.err = "InvalidLoadedAccountsDataSizeLimit";
    }
  });
  const defaultLimit = builtins * MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT +
    others * DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
  b.unitLimit = Math.min(requestedLimit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT);
  return b;
}

/** Base fee per signature plus the prioritization fee, ceil(price * limit / 1e6). */
export function transactionFee(numSignatures: number, budget: ComputeBudget): bigint {
  const priority = (budget.unitPrice * BigInt(budget.unitLimit) + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(numSignatures) + priority;
}
