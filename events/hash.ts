/** The SHA-256 chain over the global log: an edited, inserted or deleted event breaks it. */
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

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as BufferSource);
  return toHex(new Uint8Array(digest));
}

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/** The hash of an event covers everything but the hash itself, chained to its predecessor. */
export function eventHash(event: Omit<StoredEvent, "hash">): Promise<string> {
  const { prevHash, ...body } = event;
  return sha256Hex(`${prevHash}\n${canonicalJson(body)}`);
}
