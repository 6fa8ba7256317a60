/**
 * Durable nonces, as the bank handles them and litesvm (whose blockhash check the node turns
 * off, see node.ts) does not: a transaction whose recent blockhash is no longer in the window is
 * still valid when its first instruction is the System program's AdvanceNonceAccount, that
 * instruction's nonce account (writable) is an initialized nonce account holding exactly that
 * blockhash as its durable nonce, the account's authority signs the instruction, and the nonce
 * can advance (it is not already the one the current blockhash gives). Such a transaction that
 * lands with an error still advances the nonce, with its fee, so it cannot be replayed.
 * The AdvanceNonceAccount instruction itself runs in litesvm's real System program; the node
 * then puts the bank's nonce in place of litesvm's (`noncesToSettle`).
 */
import { SYSTEM_PROGRAM } from "./accounts.ts";
import type { AccountSnap } from "./accounts.ts";
import { base58Decode, sha256 } from "./codec.ts";
import { LAMPORTS_PER_SIGNATURE } from "./fees.ts";
import { isSigner, isWritable, type ResolvedTransaction } from "./message.ts";
import { bytesEqual } from "../kernel/bytes.ts";

/** SystemInstruction::AdvanceNonceAccount. */
const ADVANCE_NONCE_ACCOUNT = 4;
/** SystemInstruction::InitializeNonceAccount. */
const INITIALIZE_NONCE_ACCOUNT = 6;
/** Versions::Current, State::Initialized: authority (32), durable nonce (32), fee (u64). */
export const NONCE_ACCOUNT_LENGTH = 80;
const CURRENT = 1;
const INITIALIZED = 1;

/** The nonce the System program stores when it advances under `blockhash` (DurableNonce). */
export function durableNonceOf(blockhash: string): Uint8Array {
  return sha256(new TextEncoder().encode("DURABLE_NONCE"), base58Decode(blockhash));
}

/** The key index of the nonce account the transaction advances first, or null (the bank's rule). */
export function nonceAccountIndex(tx: ResolvedTransaction): number | null {
  const ix = tx.instructions[0];
  if (!ix || tx.keyStrings[ix.programIdIndex] !== SYSTEM_PROGRAM) return null;
  if (ix.data.length < 4) return null;
  const tag = new DataView(ix.data.buffer, ix.data.byteOffset, 4).getUint32(0, true);
  if (tag !== ADVANCE_NONCE_ACCOUNT) return null;
  const index = ix.accounts[0];
  return index !== undefined && isWritable(tx, index) ? index : null;
}

interface NonceData {
  authority: Uint8Array;
  nonce: Uint8Array;
}

function nonceData(a: AccountSnap | null): NonceData | null {
  if (!a || a.ownerStr !== SYSTEM_PROGRAM || a.data.length !== NONCE_ACCOUNT_LENGTH) return null;
  const v = new DataView(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  if (v.getUint32(0, true) !== CURRENT || v.getUint32(4, true) !== INITIALIZED) return null;
  return { authority: a.data.slice(8, 40), nonce: a.data.slice(40, 72) };
}

/**
 * Whether the transaction is a valid durable-nonce transaction now (the bank's
 * check_load_and_advance_message_nonce_account). `account` reads the chain's accounts;
 * `latestBlockhash` is the one the bank advances nonces under.
 */
export function nonceTransactionValid(
  tx: ResolvedTransaction,
  account: (index: number) => AccountSnap | null,
  latestBlockhash: string,
): boolean {
  const index = nonceAccountIndex(tx);
  if (index === null) return false;
  const data = nonceData(account(index));
  if (!data || !bytesEqual(data.nonce, tx.recentBlockhash)) return false;
  // Already the nonce the current blockhash gives: advancing it again would fail.
  if (bytesEqual(data.nonce, durableNonceOf(latestBlockhash))) return false;
  const signers = tx.instructions[0].accounts.filter((i) => isSigner(tx, i));
  return signers.some((i) => bytesEqual(tx.keys[i], data.authority));
}

/**
 * The nonce accounts a landed transaction leaves holding the bank's durable nonce: litesvm's
 * System program advances (and initializes) a nonce under the transaction's own recent
 * blockhash, the bank's under its current one, so the node rewrites them. A successful
 * transaction: every top-level AdvanceNonceAccount and InitializeNonceAccount. A nonce
 * transaction that failed (`failedNonce`): its nonce account, which the bank advances with the
 * fee so that the transaction cannot be replayed, where litesvm rolled it back.
 */
export function noncesToSettle(
  tx: ResolvedTransaction,
  succeeded: boolean,
  failedNonce: boolean,
): number[] {
  const out = new Set<number>();
  if (succeeded) {
    for (const ix of tx.instructions) {
      if (tx.keyStrings[ix.programIdIndex] !== SYSTEM_PROGRAM || ix.data.length < 4) continue;
      const tag = new DataView(ix.data.buffer, ix.data.byteOffset, 4).getUint32(0, true);
      if (
        (tag === ADVANCE_NONCE_ACCOUNT || tag === INITIALIZE_NONCE_ACCOUNT) && ix.accounts.length
      ) {
        out.add(ix.accounts[0]);
      }
    }
  } else if (failedNonce) {
    const index = nonceAccountIndex(tx);
    if (index !== null) out.add(index);
  }
  return [...out];
}

/** `a` holding the durable nonce of `blockhash`, or null when `a` is not an initialized nonce. */
export function settledNonce(a: AccountSnap | null, blockhash: string): AccountSnap | null {
  if (!a || !nonceData(a)) return null;
  const data = a.data.slice();
  data.set(durableNonceOf(blockhash), 40);
  new DataView(data.buffer).setBigUint64(72, LAMPORTS_PER_SIGNATURE, true);
  return a.with({ data });
}
