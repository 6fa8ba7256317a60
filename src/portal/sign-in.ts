/**
 * Wallet sign-in for the portal: the wallet signs a one-time message (domain, nonce, expiry) in
 * the style of Sign-In With Solana; we verify the ed25519 signature with WebCrypto and open a
 * short-lived session. Nonces are single-use and expire; sessions are opaque random ids.
 */
import { verifyEd25519 } from "../kernel/ed25519.ts";
import bs58 from "bs58";
import type { Clock } from "../kernel/clock.ts";
import { toHex } from "../kernel/hashing.ts";

const CHALLENGE_TTL_MS = 5 * 60_000;
export const SESSION_TTL_MS = 12 * 3_600_000;

interface Challenge {
  wallet: string;
  message: string;
  expiresAt: number;
}
export interface Session {
  wallet: string;
  expiresAt: number;
}

const challengeKey = (nonce: string): Deno.KvKey => ["signin", nonce];
const sessionKey = (id: string): Deno.KvKey => ["session", id];

/** `origin`: the portal's, as PUBLIC_BASE_URL gives it (scheme, host and port). */
export function signInMessage(
  origin: string,
  wallet: string,
  nonce: string,
  issued: number,
): string {
  return [
    `${new URL(origin).host} wants you to sign in with your Solana account:`,
    wallet,
    "",
    "Sign in to manage your token-creation API key. This costs nothing and moves no funds.",
    "",
    `URI: ${origin}`,
    "Version: 1",
    `Nonce: ${nonce}`,
    `Issued At: ${new Date(issued).toISOString()}`,
    `Expiration Time: ${new Date(issued + CHALLENGE_TTL_MS).toISOString()}`,
  ].join("\n");
}

export async function createChallenge(kv: Deno.Kv, clock: Clock, origin: string, wallet: string) {
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(16)));
  const now = clock();
  const message = signInMessage(origin, wallet, nonce, now);
  const value: Challenge = { wallet, message, expiresAt: now + CHALLENGE_TTL_MS };
  await kv.set(challengeKey(nonce), value, { expireIn: CHALLENGE_TTL_MS });
  return { nonce, message, expiresAt: value.expiresAt };
}

/** Consumes the nonce (once, atomically) and opens a session when the signature checks out. */
export async function completeSignIn(
  kv: Deno.Kv,
  clock: Clock,
  input: { wallet: string; nonce: string; signature: string },
): Promise<{ sessionId: string; session: Session } | null> {
  const entry = await kv.get<Challenge>(challengeKey(input.nonce));
  const ch = entry.value;
  if (!ch || ch.wallet !== input.wallet || ch.expiresAt <= clock()) return null;
  const consumed = await kv.atomic().check(entry).delete(challengeKey(input.nonce)).commit();
  if (!consumed.ok) return null;
  let sig: Uint8Array;
  try {
    sig = bs58.decode(input.signature);
  } catch {
    return null;
  }
  if (!(await verifyEd25519(input.wallet, new TextEncoder().encode(ch.message), sig))) return null;
  const sessionId = bs58.encode(crypto.getRandomValues(new Uint8Array(32)));
  const session: Session = { wallet: input.wallet, expiresAt: clock() + SESSION_TTL_MS };
  await kv.set(sessionKey(sessionId), session, { expireIn: SESSION_TTL_MS });
  return { sessionId, session };
}

export async function readSession(kv: Deno.Kv, clock: Clock, id: string | undefined) {
  if (!id || id.length > 64) return null;
  const s = (await kv.get<Session>(sessionKey(id))).value;
  return s && s.expiresAt > clock() ? s : null;
}

export const endSession = (kv: Deno.Kv, id: string) => kv.delete(sessionKey(id));
