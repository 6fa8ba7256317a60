/** Builds and lands tokens through the real API on the embedded chain, for the integrator tests. */
import bs58 from "bs58";
import type { Keypair } from "@solana/web3.js";
import { assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness } from "../support/harness.ts";

export interface Built {
  buildId: number;
  mint: string;
  transaction: string;
}

export async function build(h: Harness, apiKey: string, payer: Keypair, name = "List Cat") {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: payer.publicKey.toBase58(),
      name,
      symbol: "LST",
      metadataUri: "https://example.com/m/list.json",
      supply: "10",
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return body as Built;
}

/** Signs and sends the built transaction, then asks the service to verify it (which records it). */
export async function land(h: Harness, apiKey: string, payer: Keypair, built: Built) {
  const tx = decodeTx(built.transaction);
  tx.sign([payer]);
  const signature = bs58.encode(tx.signatures[0]);
  await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(signature);
  const res = await h.request(`/v1/transactions/${signature}`, { headers: bearer(apiKey) });
  const body = await res.json();
  assertEquals(res.status, 200, JSON.stringify(body));
  return { signature, verification: body };
}
