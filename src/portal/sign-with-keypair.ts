import type { Keypair } from "@solana/web3.js";

/**
 * Ed25519 signature with a web3.js keypair through WebCrypto, for tools and tests that play the
 * wallet. The 16-byte prefix is the fixed PKCS#8 header for a raw Ed25519 seed.
 */
export async function signWithKeypair(wallet: Keypair, message: Uint8Array): Promise<Uint8Array> {
  const pkcs8 = new Uint8Array([
    0x30,
    0x2e,
    0x02,
    0x01,
    0x00,
    0x30,
    0x05,
    0x06,
    0x03,
    0x2b,
    0x65,
    0x70,
    0x04,
    0x22,
    0x04,
    0x20,
    ...wallet.secretKey.slice(0, 32),
  ]);
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("Ed25519", key, message as BufferSource));
}
