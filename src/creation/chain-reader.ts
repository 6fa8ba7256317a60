/**
 * Reads landed transactions from the RPC into the plain shape `assessCreation` takes, with their
 * signers: a build's outcome comes only from a transaction its payer signed, since anyone can put
 * our reference key or a build's mint, read-only, into a transaction of their own.
 */
import { type Connection, PublicKey } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import type { Logger } from "../kernel/logger.ts";
import { addressHistory } from "../solana/address-history.ts";
import { knownForeign, noteForeign } from "../solana/foreign-transactions.ts";
import type { LandedTransaction } from "./assess.ts";

/** A landed transaction and who signed it (the message's required signers). */
export interface SignedLanding extends LandedTransaction {
  signers: string[];
}

export async function readLanded(
  connection: Connection,
  signature: string,
): Promise<SignedLanding | null> {
  const tx = await connection.getTransaction(signature, {
    commitment: "confirmed",
    maxSupportedTransactionVersion: 0,
  });
  if (!tx || !tx.meta) return null;
  const msg = tx.transaction.message;
  const accountKeys = msg.staticAccountKeys.map((k) => k.toBase58());
  return {
    signature,
    slot: tx.slot,
    blockTime: tx.blockTime ?? null,
    err: tx.meta.err ?? null,
    accountKeys,
    signers: accountKeys.slice(0, msg.header.numRequiredSignatures),
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

/** Whether the build's payer signed the transaction: only then does it speak for the build. */
export const signedByPayer = (tx: { signers: string[] }, payer: string) =>
  tx.signers.includes(payer);

const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);
/** Token instructions InitializeMint (0) and InitializeMint2 (20): the mint is their account 0. */
const INITIALIZE_MINT = new Set([0, 20]);

/**
 * Whether a landed transaction is the build's own: its payer signed it and, if it succeeded, the
 * creation ran (it initialized the mint, or a token account of the mint exists after it). In an
 * integrator's app the payer is any end user, who can land a cheap transaction of their own
 * carrying the reference and mint; taken as an unverified creation, a few of those suspended the
 * integrator's key with nothing created. A failed one still fails the build: it was the payer's.
 */
export function speaksFor(tx: SignedLanding, build: { payer: string; mint: string }): boolean {
  if (!signedByPayer(tx, build.payer)) return false;
  if (tx.err !== null && tx.err !== undefined) return true;
  if (tx.postTokenBalances.some((b) => b.mint === build.mint)) return true;
  return tx.instructions.some((ix) =>
    TOKEN_PROGRAMS.has(tx.accountKeys[ix.programIdIndex]) && INITIALIZE_MINT.has(ix.data[0]) &&
    tx.accountKeys[ix.accounts[0]] === build.mint
  );
}

/**
 * Whether the cluster has seen the signature at all (processed or later, from its recent status
 * cache): a transaction in flight, not yet readable at confirmed commitment.
 */
export async function clusterHasSeen(connection: Connection, signature: string): Promise<boolean> {
  const { value } = await connection.getSignatureStatuses([signature]);
  return (value[0] ?? null) !== null;
}

export interface ReaderContext {
  connection: Connection;
  kv: Deno.Kv;
  logger: Logger;
}

export interface LookupLimits {
  pageSize?: number;
  maxPages?: number;
  /** getTransaction calls one lookup may make. */
  maxReads?: number;
}

export const MAX_READS = 100;

export interface PayerLookup {
  /** The payer's transaction: a successful one wins over a failed one. */
  found: SignedLanding | null;
  /**
   * Something listed could not be read yet (a node behind another) or a bound cut the lookup
   * short: the answer may still change, so a build must not be given up on.
   */
  uncertain: boolean;
}

/**
 * The transaction the payer signed among those that mention `address` (a build's reference key
 * or mint, which are fresh, so their whole history is since the build). Every other transaction
 * read on the way is noted as foreign, once, and skipped unread afterwards.
 */
export async function findPayerTransaction(
  r: ReaderContext,
  address: string,
  /** The payer; or the build (payer and mint), and then only a transaction that `speaksFor` it. */
  owner: string | { payer: string; mint: string },
  about: { buildId?: number },
  limits: LookupLimits = {},
): Promise<PayerLookup> {
  const payer = typeof owner === "string" ? owner : owner.payer;
  const walk = await addressHistory(r.connection, new PublicKey(address), limits);
  if (!walk.complete) {
    r.logger.log("warn", "history lookup stopped at its page bound", {
      address,
      ...about,
      pages: walk.pages,
    });
  }
  const known = await knownForeign(r.kv, walk.signatures.map((s) => s.signature));
  const unseen = walk.signatures.filter((s) => !known.has(s.signature));
  // Oldest first, successful ones before failed ones: the payer's landing is usually the first.
  const ordered = [...unseen.filter((s) => !s.err), ...unseen.filter((s) => s.err)];
  const maxReads = limits.maxReads ?? MAX_READS;
  let uncertain = !walk.complete;
  let failed: SignedLanding | null = null;
  let reads = 0;
  for (const s of ordered) {
    if (reads++ >= maxReads) {
      r.logger.log("warn", "history lookup stopped at its read bound", {
        address,
        ...about,
        reads: maxReads,
      });
      uncertain = true;
      break;
    }
    const tx = await readLanded(r.connection, s.signature);
    if (!tx) {
      uncertain = true;
      continue;
    }
    if (!signedByPayer(tx, payer)) {
      await noteForeign(r.kv, r.logger, {
        signature: tx.signature,
        address,
        signers: tx.signers,
        ...about,
      });
      continue;
    }
    // The payer's own, but it created nothing: not the build's landing (read again next time).
    if (typeof owner !== "string" && !speaksFor(tx, owner)) continue;
    if (tx.err === null || tx.err === undefined) return { found: tx, uncertain: false };
    failed ??= tx;
  }
  return { found: uncertain ? null : failed, uncertain };
}
