/** The SHA-256 chain over the global log: an edited, inserted or deleted event breaks it. */
import type { StoredEvent } from "./types.ts";
import { sha256Hex } from "../src/kernel/hashing.ts";

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

/** The hash of an event covers everything but the hash itself, chained to its predecessor. */
export function eventHash(event: Omit<StoredEvent, "hash">): Promise<string> {
  const { prevHash, ...body } = event;
  return sha256Hex(`${prevHash}\n${canonicalJson(body)}`);
}
