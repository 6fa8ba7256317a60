/**
 * Issue, rotate and delete an API key for the wallet that owns the purchase. A new secret is
 * made here, only its keyed hash goes into the event, and the full key is returned once.
 */
import { formatKey, macSecret, newKeyId, newSecret } from "../../keys/api-key.ts";
import type { Services } from "../../services.ts";
import { handleAccess } from "./handle.ts";
import { ownPurchase } from "./purchase.ts";

export interface RevealedKey {
  keyId: string;
  apiKey: string;
  shownOnce: true;
}

export async function issueKey(
  s: Services,
  purchaseId: string,
  wallet: string,
): Promise<RevealedKey> {
  const p = await ownPurchase(s, purchaseId, wallet);
  const keyId = newKeyId();
  const secret = newSecret();
  await handleAccess(s.store, {
    type: "IssueKey",
    purchaseId: p.purchaseId,
    wallet,
    keyId,
    secretMac: await macSecret(s.pepper, secret),
  }, s.clock);
  return { keyId, apiKey: formatKey(s.config.keyPrefix, keyId, secret), shownOnce: true };
}

export async function rotateKey(s: Services, keyId: string, wallet: string): Promise<RevealedKey> {
  const secret = newSecret();
  await handleAccess(s.store, {
    type: "RotateKey",
    keyId,
    wallet,
    secretMac: await macSecret(s.pepper, secret),
  }, s.clock);
  return { keyId, apiKey: formatKey(s.config.keyPrefix, keyId, secret), shownOnce: true };
}

export async function deleteKey(s: Services, keyId: string, wallet: string) {
  await handleAccess(s.store, { type: "DeleteKey", keyId, wallet }, s.clock);
  return { keyId, status: "deleted" as const };
}
