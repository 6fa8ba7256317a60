/**
 * Reads a landed transaction against the build it claims to be and says what really happened:
 * the mint received exactly the full supply at the recipient's token account, with the build's
 * decimals and owned by the build's recipient, and the treasury was paid at least the quoted fee
 * by a transfer that carries the build's reference key. What it reports (supply, decimals,
 * recipient, fee) is what the transaction shows, not what the build intended.
 * Pure: the transaction comes in as data.
 */
import type { BuildDoc } from "../../projections/builds.ts";

export const SYSTEM_PROGRAM = "11111111111111111111111111111111";

export interface LandedTransaction {
  signature: string;
  slot: number;
  blockTime: number | null;
  err: unknown | null;
  accountKeys: string[];
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
}

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  uiTokenAmount: { amount: string; decimals: number };
}

export type Assessment =
  | { status: "failed"; reason: string }
  | {
    status: "confirmed" | "unverified";
    feeLamportsSeen: bigint;
    supplyRawSeen: bigint;
    /** The mint's decimals and the token account's owner as the landed transaction shows them. */
    decimalsSeen?: number | null;
    recipientSeen?: string | null;
    problems: string[];
  };

/** The lamports of a top-level System transfer to the treasury that carries the reference. */
export function feePaid(tx: LandedTransaction, treasury: string, reference: string): bigint {
  let paid = 0n;
  for (const ix of tx.instructions) {
    if (tx.accountKeys[ix.programIdIndex] !== SYSTEM_PROGRAM) continue;
    const d = ix.data;
    // System instruction 2 = Transfer { lamports: u64 }.
    if (d.length !== 12 || new DataView(d.buffer, d.byteOffset).getUint32(0, true) !== 2) continue;
    const keys = ix.accounts.map((i) => tx.accountKeys[i]);
    // Exactly [from, treasury, reference], as built: a transfer carrying a second reference would
    // otherwise pay for two builds (or a build and an access purchase) at once.
    if (keys.length !== 3 || keys[1] !== treasury || keys[2] !== reference) continue;
    paid += new DataView(d.buffer, d.byteOffset).getBigUint64(4, true);
  }
  return paid;
}

/** The token account's balance entry for the mint after the transaction, if it has one. */
export function tokenAccountAfter(
  tx: LandedTransaction,
  mint: string,
  tokenAccount: string,
): TokenBalance | null {
  const index = tx.accountKeys.indexOf(tokenAccount);
  return tx.postTokenBalances.find((b) => b.accountIndex === index && b.mint === mint) ?? null;
}

export function supplyReceived(tx: LandedTransaction, mint: string, tokenAccount: string): bigint {
  const index = tx.accountKeys.indexOf(tokenAccount);
  if (index < 0) return 0n;
  const amount = (list: TokenBalance[]) =>
    BigInt(
      list.find((b) => b.accountIndex === index && b.mint === mint)?.uiTokenAmount.amount ?? "0",
    );
  return amount(tx.postTokenBalances) - amount(tx.preTokenBalances);
}

export function assessCreation(
  build: Pick<
    BuildDoc,
    | "mint"
    | "recipientTokenAccount"
    | "supplyRaw"
    | "feeLamports"
    | "feeFloorLamports"
    | "treasury"
    | "reference"
    | "decimals"
    | "recipient"
  >,
  tx: LandedTransaction,
): Assessment {
  if (tx.err !== null && tx.err !== undefined) {
    return { status: "failed", reason: `landed with an error: ${JSON.stringify(tx.err)}` };
  }
  const problems: string[] = [];
  if (!tx.accountKeys.includes(build.mint)) problems.push("the mint is not in the transaction");
  const supply = supplyReceived(tx, build.mint, build.recipientTokenAccount);
  if (supply !== BigInt(build.supplyRaw)) {
    problems.push(`recipient received ${supply} base units, expected ${build.supplyRaw}`);
  }
  const account = tokenAccountAfter(tx, build.mint, build.recipientTokenAccount);
  const decimalsSeen = account?.uiTokenAmount.decimals ?? null;
  const recipientSeen = account?.owner ?? null;
  if (decimalsSeen !== null && decimalsSeen !== build.decimals) {
    problems.push(`the mint has ${decimalsSeen} decimals, expected ${build.decimals}`);
  }
  if (recipientSeen !== null && recipientSeen !== build.recipient) {
    problems.push(`the token account belongs to ${recipientSeen}, expected ${build.recipient}`);
  }
  const fee = feePaid(tx, build.treasury, build.reference);
  // A refreshed build may have been issued at more than one fee: each was a quote of ours.
  const quoted = build.feeFloorLamports ?? build.feeLamports;
  if (fee === 0n) problems.push("no service fee with the build's reference in the transaction");
  else if (fee < BigInt(quoted)) {
    problems.push(`service fee ${fee} lamports is below the quoted ${quoted}`);
  }
  return {
    status: problems.length === 0 ? "confirmed" : "unverified",
    feeLamportsSeen: fee,
    supplyRawSeen: supply,
    decimalsSeen,
    recipientSeen,
    problems,
  };
}
