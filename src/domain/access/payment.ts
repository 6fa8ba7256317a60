/**
 * The access-fee payment on chain: the unsigned transfer the wallet signs, and the check that
 * finds it again by its reference key once it is confirmed.
 */
import {
  type Connection,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import type { Logger } from "../../kernel/logger.ts";
import { addressHistory, MAX_PAGES, PAGE_SIZE } from "../../solana/address-history.ts";
import { knownForeign, noteForeign } from "../../solana/foreign-transactions.ts";

export interface PaymentRequest {
  wallet: PublicKey;
  treasury: PublicKey;
  currency: "SOL" | "STABLECOIN";
  amount: bigint;
  reference: PublicKey;
  /** The mint's facts from the chain; `programId` defaults to SPL Token. */
  stablecoin?: { mint: PublicKey; decimals: number; programId?: PublicKey };
}

export function paymentInstructions(r: PaymentRequest): TransactionInstruction[] {
  const ref = { pubkey: r.reference, isSigner: false, isWritable: false };
  if (r.currency === "SOL") {
    const ix = SystemProgram.transfer({
      fromPubkey: r.wallet,
      toPubkey: r.treasury,
      lamports: r.amount,
    });
    ix.keys.push(ref);
    return [ix];
  }
  if (!r.stablecoin) throw new Error("no stablecoin configured");
  const { mint, decimals, programId = TOKEN_PROGRAM_ID } = r.stablecoin;
  const from = getAssociatedTokenAddressSync(mint, r.wallet, true, programId);
  const to = getAssociatedTokenAddressSync(mint, r.treasury, true, programId);
  const transfer = createTransferCheckedInstruction(
    from,
    mint,
    to,
    r.wallet,
    r.amount,
    decimals,
    [],
    programId,
  );
  transfer.keys.push(ref);
  return [
    createAssociatedTokenAccountIdempotentInstruction(r.wallet, to, r.treasury, mint, programId),
    transfer,
  ];
}

export async function buildPaymentTransaction(connection: Connection, r: PaymentRequest) {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash("confirmed");
  const tx = new Transaction({ feePayer: r.wallet, blockhash, lastValidBlockHeight });
  tx.add(...paymentInstructions(r));
  const bytes = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
  return { transaction: bytes.toString("base64"), blockhash, lastValidBlockHeight };
}

export interface FoundPayment {
  signature: string;
  slot: number;
  /** Seconds; what the quote's validity is judged by. */
  blockTime: number | null;
  /** Base units this transaction brought to the treasury for this reference. */
  received: bigint;
}

export interface PaymentLookup {
  /** Notes foreign transactions (signed by someone else) once, and skips them afterwards. */
  kv?: Deno.Kv;
  logger?: Logger;
  purchaseId?: string;
  pageSize?: number;
  maxPages?: number;
  /** getTransaction calls one lookup may make. */
  maxReads?: number;
}

const MAX_READS = 100;

/**
 * Where a purchase's lookups have got to in its reference's history, so a repeated check reads
 * only what it has not examined yet (anyone can flood a reference, and anyone can repeat checks):
 * - `settled`: every transaction up to and including it has been examined;
 * - `boundaries`: when more landed above `settled` than one lookup pages through, the oldest
 *   signature each lookup reached on its way down, newest first. The next lookup pages on from
 *   the last one; once a lookup reaches `settled`, what it read is examined oldest first and the
 *   boundary is dropped, so each page of history is listed about once however large the flood.
 */
export interface PaymentCursor {
  settled?: string;
  boundaries?: string[];
}

/** Page-down positions kept; past it the lowest one is moved down (upper pages are read again). */
const MAX_BOUNDARIES = 100;

/**
 * Pages through the reference's history (it is fresh, so that is everything since the quote) and
 * accepts the first landed transaction, not among `counted`, signed by the wallet that transfers
 * to the treasury carrying the reference as the instruction was built (`paidTo`). What it is worth
 * (late, short) is for the caller to price: nothing the wallet paid is ignored. Anyone can land
 * transactions that carry the reference once it is public; they cannot push the payment out of
 * sight, and each is noted as foreign once and not read again.
 */
export async function findPayment(
  connection: Connection,
  r: PaymentRequest,
  opts: PaymentLookup = {},
  counted: ReadonlySet<string> = new Set(),
): Promise<FoundPayment | null> {
  return (await findPaymentFrom(connection, r, opts, counted, {})).found;
}

/**
 * `findPayment` from where an earlier lookup got to (`cursor`); answers the cursor to keep for the
 * next one. Oldest first, as `findPayment`: a payment comes soon after its quote, so what lands
 * after it is never read.
 */
export async function findPaymentFrom(
  connection: Connection,
  r: PaymentRequest,
  opts: PaymentLookup,
  counted: ReadonlySet<string>,
  cursor: PaymentCursor,
): Promise<{ found: FoundPayment | null; cursor: PaymentCursor }> {
  const about = { purchaseId: opts.purchaseId, address: r.reference.toBase58() };
  const boundaries = cursor.boundaries ?? [];
  const pageSize = opts.pageSize ?? PAGE_SIZE;
  // At least 2: a stop is set one page above the lowest page read (below).
  const maxPages = Math.max(2, opts.maxPages ?? MAX_PAGES);
  const walk = await addressHistory(connection, r.reference, {
    ...opts,
    pageSize,
    maxPages,
    until: cursor.settled,
    before: boundaries.at(-1),
  });
  if (!walk.complete) {
    opts.logger?.log("warn", "payment lookup stopped at its page bound; the next goes on from it", {
      ...about,
      pages: walk.pages,
    });
    // The stop is the lowest signature of all but the last page read: the stretch between two
    // stops is then maxPages - 1 full pages, which one lookup lists to its end (the page after
    // them says it is the end), so coming back up never stops halfway.
    const lowest = walk.signatures[pageSize].signature;
    const next = boundaries.length < MAX_BOUNDARIES
      ? [...boundaries, lowest]
      : [...boundaries.slice(0, -1), lowest];
    return { found: null, cursor: { settled: cursor.settled, boundaries: next } };
  }
  let settled = cursor.settled;
  // A transaction not readable yet (or again) stops the settling there: it is read next time.
  let stuck = false;
  const examined = (signature: string) => {
    if (!stuck) settled = signature;
  };
  const done = (found: FoundPayment | null, segmentDone: boolean) => ({
    found,
    cursor: {
      settled,
      boundaries: segmentDone ? boundaries.slice(0, -1) : boundaries,
    },
  });
  const unread = (s: { err: unknown; signature: string }) => !s.err && !counted.has(s.signature);
  const known = opts.kv
    ? await knownForeign(opts.kv, walk.signatures.filter(unread).map((s) => s.signature))
    : new Set<string>();
  const maxReads = opts.maxReads ?? MAX_READS;
  let reads = 0;
  for (const { signature, err } of walk.signatures) {
    if (err || counted.has(signature) || known.has(signature)) {
      examined(signature);
      continue;
    }
    if (reads++ >= maxReads) {
      opts.logger?.log("warn", "payment lookup stopped at its read bound", {
        ...about,
        reads: maxReads,
      });
      return done(null, false);
    }
    const tx = await connection.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    if (!tx?.meta) {
      stuck = true;
      continue;
    }
    if (!tx.meta.err) {
      const message = tx.transaction.message;
      const keys = message.getAccountKeys().staticAccountKeys;
      const signers = keys.slice(0, message.header.numRequiredSignatures);
      if (!signers.some((k) => k.equals(r.wallet))) {
        if (opts.kv && opts.logger) {
          await noteForeign(opts.kv, opts.logger, {
            signature,
            address: about.address,
            purchaseId: opts.purchaseId,
            signers: signers.map((k) => k.toBase58()),
          });
        }
      } else {
        const instructions = message.compiledInstructions.map((ix) => ({
          program: keys[ix.programIdIndex],
          accounts: ix.accountKeyIndexes.map((i) => keys[i]),
          data: ix.data,
        }));
        const received = paidTo(instructions, r);
        // Not settled past it: the caller records it, and it is `counted` from then on.
        if (received > 0n) {
          return done(
            { signature, slot: tx.slot, blockTime: tx.blockTime ?? null, received },
            false,
          );
        }
      }
    }
    examined(signature);
  }
  return done(null, !stuck);
}

export interface PaymentInstruction {
  program: PublicKey;
  accounts: PublicKey[];
  data: Uint8Array;
}

/**
 * What the wallet's transfers to the treasury that carry this purchase's reference add up to,
 * counting only instructions with exactly the accounts `paymentInstructions` gives them. One
 * transfer carrying several references (several purchases, or a purchase and a token build) pays
 * none of them, so one payment can never be counted twice.
 */
export function paidTo(instructions: PaymentInstruction[], r: PaymentRequest): bigint {
  let paid = 0n;
  for (const ix of instructions) {
    const d = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength);
    const is = (keys: PublicKey[]) =>
      ix.accounts.length === keys.length && ix.accounts.every((k, i) => k.equals(keys[i]));
    if (r.currency === "SOL") {
      // System instruction 2 = Transfer { lamports: u64 }.
      if (!ix.program.equals(SystemProgram.programId) || ix.data.length !== 12) continue;
      if (d.getUint32(0, true) !== 2 || !is([r.wallet, r.treasury, r.reference])) continue;
      paid += d.getBigUint64(4, true);
    } else {
      // Token instruction 12 = TransferChecked { amount: u64, decimals: u8 }.
      if (!r.stablecoin) continue; // no stablecoin configured now: nothing can pay in it
      const { mint, decimals, programId = TOKEN_PROGRAM_ID } = r.stablecoin;
      if (!ix.program.equals(programId) || ix.data.length !== 10) continue;
      if (ix.data[0] !== 12 || ix.data[9] !== decimals) continue;
      const from = getAssociatedTokenAddressSync(mint, r.wallet, true, programId);
      const to = getAssociatedTokenAddressSync(mint, r.treasury, true, programId);
      if (!is([from, mint, to, r.wallet, r.reference])) continue;
      paid += d.getBigUint64(1, true);
    }
  }
  return paid;
}
