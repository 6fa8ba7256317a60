/** Reads landed transactions from the RPC into the plain shape `assessCreation` takes. */
import { type Connection, PublicKey } from "@solana/web3.js";
import type { LandedTransaction } from "./assess.ts";

export async function readLanded(
  connection: Connection,
  signature: string,
): Promise<LandedTransaction | null> {
  const tx = await connection.getTransaction(signature, {
    commitment: "confirmed",
    maxSupportedTransactionVersion: 0,
  });
  if (!tx || !tx.meta) return null;
  const msg = tx.transaction.message;
  return {
    signature,
    slot: tx.slot,
    blockTime: tx.blockTime ?? null,
    err: tx.meta.err ?? null,
    accountKeys: msg.staticAccountKeys.map((k) => k.toBase58()),
    instructions: msg.compiledInstructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: ix.accountKeyIndexes,
      data: ix.data,
    })),
    preBalances: tx.meta.preBalances,
    postBalances: tx.meta.postBalances,
    preTokenBalances: tx.meta.preTokenBalances ?? [],
    postTokenBalances: tx.meta.postTokenBalances ?? [],
  };
}

/**
 * Whether the cluster has seen the signature at all (processed or later, from its recent status
 * cache): a transaction in flight, not yet readable at confirmed commitment.
 */
export async function clusterHasSeen(connection: Connection, signature: string): Promise<boolean> {
  const { value } = await connection.getSignatureStatuses([signature]);
  return (value[0] ?? null) !== null;
}

/**
 * The transaction that carries a reference key, if one landed: a successful one wins over a
 * failed one, since anyone can append our reference to a transaction of their own.
 */
export async function findByReference(connection: Connection, reference: string) {
  const sigs = await connection.getSignaturesForAddress(
    new PublicKey(reference),
    { limit: 20 },
    "confirmed",
  );
  return sigs.find((s) => !s.err) ?? sigs[0] ?? null;
}
