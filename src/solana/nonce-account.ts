/**
 * A durable nonce account as the chain holds it: a System-owned account of 80 bytes in the
 * initialized state, with its authority and stored nonce (read with web3.js's NonceAccount).
 * The build (src/tokens/nonce.ts) and the watcher (src/creation/watcher.ts) read it alike.
 */
import {
  type AccountInfo,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  type PublicKey,
  SystemProgram,
} from "@solana/web3.js";

/** The nonce state `Initialized` (after the u32 version): anything else holds no nonce. */
const INITIALIZED = 1;

type Account = Pick<AccountInfo<Uint8Array>, "owner" | "data">;

/** The stored nonce, or null when the account is not an initialized System nonce account. */
export function storedNonce(
  info: Account | null,
): { authority: PublicKey; nonce: string } | null {
  if (!info || !info.owner.equals(SystemProgram.programId)) return null;
  if (info.data.length !== NONCE_ACCOUNT_LENGTH) return null;
  const state = new DataView(info.data.buffer, info.data.byteOffset, 8).getUint32(4, true);
  if (state !== INITIALIZED) return null;
  const n = NonceAccount.fromAccountData(info.data);
  return { authority: n.authorizedPubkey, nonce: n.nonce };
}
