/**
 * The token-update flow through the service, for tests: a token created, signed and landed; an
 * update asked for, signed by its authority, landed and read back; a hosted document.
 */
import type { Keypair } from "@solana/web3.js";
import { assertEquals } from "./assert.ts";
import { bearer, decodeTx, type Harness } from "./harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

export async function createToken(
  h: Harness,
  apiKey: string,
  payer: Keypair,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: payer.publicKey.toBase58(),
      name: "Life Token",
      symbol: "LIFE",
      metadataUri: "https://example.com/m/life.json",
      supply: "1000",
      decimals: 2,
      revokeFreeze: false,
      ...extra,
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  const tx = decodeTx(body.transaction);
  tx.sign([payer]);
  const sent = await h.request("/v1/transactions", {
    method: "POST",
    headers: bearer(apiKey),
    json: { transaction: b64(tx.serialize()) },
  });
  const { signature } = await sent.json();
  assertEquals(sent.status, 202);
  await h.waitForConfirmation(signature);
  return body.mint;
}

export async function update(
  h: Harness,
  apiKey: string,
  mint: string,
  json: Record<string, unknown>,
) {
  const res = await h.request(`/v1/tokens/${mint}/update`, {
    method: "POST",
    headers: bearer(apiKey),
    json,
  });
  return { status: res.status, body: await res.json() };
}

/** Signs the update with its authority, lands it, reads it back; returns the balance drop. */
export async function land(
  h: Harness,
  apiKey: string,
  mint: string,
  built: { updateId: string; transaction: string },
  authority: Keypair,
): Promise<{ spent: bigint; record: Record<string, unknown> }> {
  const c = h.services.connection;
  const before = BigInt(await c.getBalance(authority.publicKey, "confirmed"));
  const tx = decodeTx(built.transaction);
  assertEquals(tx.message.header.numRequiredSignatures, 1);
  tx.sign([authority]);
  const signature = await c.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(signature);
  const after = BigInt(await c.getBalance(authority.publicKey, "confirmed"));
  const res = await h.request(
    `/v1/tokens/${mint}/updates/${built.updateId}?signature=${signature}`,
    { headers: bearer(apiKey) },
  );
  const record = await res.json();
  assertEquals(res.status, 200, JSON.stringify(record));
  return { spent: before - after, record };
}

export async function hostDocument(h: Harness, apiKey: string, name: string, symbol: string) {
  const res = await h.request("/v1/metadata", {
    method: "POST",
    headers: bearer(apiKey),
    json: { name, symbol, imageBase64: toBase64(makePng(1, 1)) },
  });
  assertEquals(res.status, 201);
  return (await res.json()).metadataUri as string;
}
