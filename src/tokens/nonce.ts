/**
 * Durable nonces (opt-in, `nonceAccount` on a build): the one home of what a nonce account must
 * be, what its stored nonce is, and how a nonce build's message begins.
 *
 * A nonce account is a System-owned account of 80 bytes in the initialized state, holding an
 * authority and a stored nonce. A transaction whose recent blockhash is that nonce and whose first
 * instruction is AdvanceNonceAccount, signed by the authority, stays valid until the nonce moves
 * on (the transaction itself moves it). The authority must be the payer, so the payer is still
 * the only signer. Pure: the account comes in as read by the build's one round trip.
 */
import {
  type AccountInfo,
  NONCE_ACCOUNT_LENGTH,
  PACKET_DATA_SIZE,
  type PublicKey,
  SystemProgram,
  type TransactionInstruction,
} from "@solana/web3.js";
import { storedNonce } from "../solana/nonce-account.ts";

type Account = Pick<AccountInfo<Uint8Array>, "owner" | "data">;

/**
 * Why `info` (read at `address`) cannot carry a build paid by `payer`, in the words of a 400 on
 * `nonceAccount`; null when it can.
 */
export function nonceAccountProblem(info: Account | null, payer: PublicKey): string | null {
  const create = "create one with SystemProgram.createNonceAccount (authority: the payer)";
  if (!info) return `no account exists at this address; ${create}`;
  if (!info.owner.equals(SystemProgram.programId)) {
    return `not a nonce account: it is owned by ${info.owner.toBase58()}, not the System program`;
  }
  if (info.data.length !== NONCE_ACCOUNT_LENGTH) {
    return `not a nonce account: it holds ${info.data.length} bytes of data, a nonce account ` +
      `${NONCE_ACCOUNT_LENGTH}; ${create}`;
  }
  const stored = storedNonce(info);
  if (!stored) return "not an initialized nonce account (it holds no nonce yet)";
  if (!stored.authority.equals(payer)) {
    return `its nonce authority is ${stored.authority.toBase58()}, not the payer: the payer ` +
      "must be the nonce authority, as it is the transaction's only signer";
  }
  return null;
}

/** The instruction a nonce build's message begins with (before the compute budget). */
export function advanceNonce(account: PublicKey, payer: PublicKey): TransactionInstruction {
  return SystemProgram.nonceAdvance({ noncePubkey: account, authorizedPubkey: payer });
}

/** SystemInstruction::AdvanceNonceAccount, as the first instruction's data reads. */
export const ADVANCE_NONCE_TAG = 4;

/**
 * Why the build's simulation failed on the nonce, when it did: the nonce was advanced (or
 * created) in the very block the simulation ran in, which the System program refuses
 * (NonceBlockhashNotExpired) until the next block.
 */
export function nonceSimulationProblem(err: unknown): string | null {
  const ix = (err as { InstructionError?: [number, unknown] } | null)?.InstructionError;
  if (!ix || ix[0] !== 0) return null;
  const custom = (ix[1] as { Custom?: number } | null)?.Custom;
  // SystemError::NonceBlockhashNotExpired.
  if (custom !== 7) return null;
  return "its nonce was set in the current block and can be used from the next one " +
    "(about half a second); try again";
}

/**
 * A durable nonce adds two accounts and an instruction (about 74 bytes): with every option and
 * the longest fields a Token-2022 build can then pass the size a transaction may have, which a
 * build without a nonce never does. Such a build is refused before its round trip, naming the
 * nonce.
 */
export function nonceSizeProblem(messageBytes: number): string | null {
  const wire = 1 + 64 + messageBytes; // one signature
  if (wire <= PACKET_DATA_SIZE) return null;
  return `with a durable nonce this transaction would be ${wire} bytes, over the ` +
    `${PACKET_DATA_SIZE} a transaction may have: shorten the name, symbol or metadataUri, or ` +
    "build without nonceAccount";
}

/** What a nonce build answers for its lifetime: it does not expire by block height or time. */
export const NONCE_LIFETIME = { expiresInSeconds: null, lastValidBlockHeight: null } as const;
