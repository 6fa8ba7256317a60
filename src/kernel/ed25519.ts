/**
 * Ed25519 signature checks by a Solana address: WebCrypto verifies, @noble/curves refuses keys
 * that are not canonical curve points or are of small order (a signature by such a key proves
 * nothing about who made it).
 */
import { PublicKey } from "@solana/web3.js";
import { ed25519 } from "@noble/curves/ed25519";

export async function verifyEd25519(wallet: string, message: Uint8Array, signature: Uint8Array) {
  if (signature.length !== 64) return false;
  const bytes = new PublicKey(wallet).toBytes();
  if (!isProperPublicKey(bytes)) return false;
  const key = await crypto.subtle.importKey(
    "raw",
    bytes as BufferSource,
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  return crypto.subtle.verify("Ed25519", key, signature as BufferSource, message as BufferSource);
}

function isProperPublicKey(bytes: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromHex(bytes).isSmallOrder();
  } catch {
    return false; // not a point, or not its canonical encoding
  }
}
