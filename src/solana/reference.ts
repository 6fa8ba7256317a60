/**
 * The reference key a fee transfer carries (read-only, not a signer) so that
 * getSignaturesForAddress finds the transaction: any unused 32-byte address will do, so it is 32
 * random bytes rather than a keypair's public key, whose ed25519 key generation was the build's
 * costliest step and whose secret nobody kept anyway.
 */
import { PublicKey } from "@solana/web3.js";

export const newReference = (): PublicKey =>
  new PublicKey(crypto.getRandomValues(new Uint8Array(32)));
