/** The SHA-256 chain over the global log: an edited, inserted or deleted event breaks it. */
import { createHash } from "node:crypto";
import type { StoredEvent } from "./types.ts";

export const GENESIS_HASH = "0".repeat(64);

/** JSON with object keys sorted, so the hash never depends on property order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/**
 * A link of the chain: SHA-256, in hex, of the previous event's hash, a newline and the event's
 * body text (the canonical JSON the log stores, events/codec.ts). The store, the chain check and
 * the synthetic log all hash through here. The two are joined before hashing: two updates would
 * save that copy but no time, and one string is the definition as written.
 */
export function chainHash(prevHash: string, body: string): string {
  return createHash("sha256").update(`${prevHash}\n${body}`, "utf8").digest("hex");
}

/**
 * The hash of an event covers everything but the hash itself, chained to its predecessor.
 * Synchronous: a replay hashes every event of the history, and an awaited WebCrypto call per
 * event would cost more than the rest of the check.
 */
export function eventHashSync(event: Omit<StoredEvent, "hash">): string {
  const { prevHash, ...body } = event;
  return chainHash(prevHash, canonicalJson(body));
}

/** `eventHashSync` as a promise (what the tests and the synthetic log check hashes against). */
export const eventHash = (event: Omit<StoredEvent, "hash">): Promise<string> =>
  Promise.resolve(eventHashSync(event));
