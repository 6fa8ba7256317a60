/**
 * `audit --verify-chain`: reads a landed creation back from the RPC and checks that the build's
 * payer signed it (anyone can put a reference key or a mint into a transaction of their own, so
 * no other transaction speaks for the build) and the fee we recorded against what the treasury
 * actually received in that transaction.
 */
import type { Connection } from "@solana/web3.js";

/** Just what the check needs from a confirmed transaction. */
export interface TxView {
  err: unknown;
  accountKeys: string[];
  /** The message's required signers. */
  signers: string[];
  preBalances: number[];
  postBalances: number[];
}

export type TxReader = (signature: string) => Promise<TxView | null>;

export function rpcTxReader(connection: Connection): TxReader {
  return async (signature) => {
    const tx = await connection.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    if (!tx?.meta) return null;
    const keys = tx.transaction.message.getAccountKeys({
      accountKeysFromLookups: tx.meta.loadedAddresses,
    });
    const accountKeys: string[] = [];
    for (let i = 0; i < keys.length; i++) accountKeys.push(keys.get(i)!.toBase58());
    return {
      err: tx.meta.err,
      accountKeys,
      signers: accountKeys.slice(0, tx.transaction.message.header.numRequiredSignatures),
      preBalances: tx.meta.preBalances,
      postBalances: tx.meta.postBalances,
    };
  };
}

export interface OnChainBuild {
  signature: string;
  mint: string;
  /** The build's payer; null for a record with no TokenBuilt (nothing to check it against). */
  payer: string | null;
  treasury: string;
  status: "confirmed" | "unverified";
  quotedLamports: string | null;
  feeSeenLamports: string | null;
}

export interface ChainCheck {
  /** Lamports the treasury gained in the transaction; null when it could not be read. */
  chainFeeLamports: string | null;
  problems: string[];
}

export async function checkOnChain(read: TxReader, b: OnChainBuild): Promise<ChainCheck> {
  let tx: TxView | null;
  try {
    tx = await read(b.signature);
  } catch (e) {
    return { chainFeeLamports: null, problems: [`RPC error: ${(e as Error).message}`] };
  }
  if (!tx) return { chainFeeLamports: null, problems: ["transaction not found on chain"] };
  const problems: string[] = [];
  if (b.payer !== null && !tx.signers.includes(b.payer)) {
    problems.push(`not signed by the build's payer ${b.payer}: another party's transaction`);
  }
  if (tx.err !== null && tx.err !== undefined) {
    problems.push(`transaction failed on chain: ${JSON.stringify(tx.err)}`);
  }
  if (!tx.accountKeys.includes(b.mint)) problems.push("mint is not an account of the transaction");
  const t = tx.accountKeys.indexOf(b.treasury);
  const fee = t < 0 ? 0n : BigInt(tx.postBalances[t]) - BigInt(tx.preBalances[t]);
  if (t < 0) problems.push("treasury is not an account of the transaction");
  if (b.feeSeenLamports !== null && BigInt(b.feeSeenLamports) !== fee) {
    problems.push(`recorded fee ${b.feeSeenLamports} lamports, chain shows ${fee}`);
  }
  if (b.status === "confirmed" && b.quotedLamports !== null && fee < BigInt(b.quotedLamports)) {
    problems.push(`confirmed with ${fee} lamports to the treasury, quoted ${b.quotedLamports}`);
  }
  return { chainFeeLamports: fee.toString(), problems };
}
