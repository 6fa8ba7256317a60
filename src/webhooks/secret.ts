/**
 * Webhook signing secrets: `whsec_` + base64 of 32 random bytes (the Standard Webhooks form), shown
 * once to the key's owner and kept only sealed (AES-256-GCM under a key derived from KEY_PEPPER
 * with HKDF), so an exported event log does not hand out the secrets that sign deliveries.
 * WebCrypto does the sealing; no library adds anything to it.
 */
import { Buffer } from "node:buffer";

const encodeBase64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const decodeBase64 = (s: string) => new Uint8Array(Buffer.from(s, "base64"));

const PREFIX = "whsec_";
const SEAL_INFO = new TextEncoder().encode("webhook-secret-seal-v1");

export function newWebhookSecret(): string {
  return PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(32)));
}

const keys = new Map<string, Promise<CryptoKey>>();

function sealingKey(pepper: string): Promise<CryptoKey> {
  let key = keys.get(pepper);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(pepper),
        "HKDF",
        false,
        ["deriveKey"],
      );
      return await crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: SEAL_INFO },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(pepper, key);
  }
  return key;
}

/** "v1.<iv>.<ciphertext>", both base64. */
export async function sealSecret(pepper: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await sealingKey(pepper),
    new TextEncoder().encode(secret),
  );
  return `v1.${encodeBase64(iv)}.${encodeBase64(new Uint8Array(sealed))}`;
}

export async function openSecret(pepper: string, sealed: string): Promise<string> {
  const [v, iv, data] = sealed.split(".");
  if (v !== "v1" || !iv || !data) throw new Error("not a sealed webhook secret");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: decodeBase64(iv) },
    await sealingKey(pepper),
    decodeBase64(data),
  );
  return new TextDecoder().decode(plain);
}
