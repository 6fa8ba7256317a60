/**
 * The stored body of an idempotency record, of any size. A KV value holds at most 64 KiB, and an
 * answer can be larger (an error naming many fields was 76 KB): writing it whole threw, and the 4xx
 * became a 500. A small body stays inline in the record; a larger one is kept as its JSON text cut
 * into chunks under the record's key, each chunk at most `CHUNK_CHARS` UTF-16 units (KV stores a
 * string in at most two bytes a unit, so a chunk stays far below the limit). The chunks of one
 * record carry a nonce in their keys, so a record written again (a retry that took the key over)
 * never reads another write's chunks.
 *
 * Also the record a command writes in its own commit (`recordFor`): commands import it from here,
 * below the HTTP layer; the middleware (http/idempotency.ts) reads and writes the same records.
 */
import { commitOrConflict } from "../../events/commit.ts";
import type { ExtraSet } from "../../events/store.ts";

/** UTF-16 units of JSON text a record keeps inline, and per chunk. */
export const INLINE_CHARS = 16_000;
export const CHUNK_CHARS = 16_000;
/** KV's getMany reads at most 10 keys at once. */
const READ_BATCH = 10;

/** What the record keeps of the body: inline, or the nonce and count of its chunks. */
export type StoredBody =
  | { body: unknown; bodyChunks?: undefined }
  | { body?: undefined; bodyChunks: { nonce: string; count: number } };

export const chunkKey = (recordKey: Deno.KvKey, nonce: string, i: number): Deno.KvKey => [
  ...recordKey,
  "body",
  nonce,
  i,
];

/** The record's body part, and the chunk writes that go with it (none when inline). */
export function storeBody(
  recordKey: Deno.KvKey,
  body: unknown,
  expireIn: number,
): { stored: StoredBody; chunks: ExtraSet[] } {
  const text = JSON.stringify(body) ?? "null";
  if (text.length <= INLINE_CHARS) return { stored: { body }, chunks: [] };
  const nonce = crypto.randomUUID();
  const chunks: ExtraSet[] = [];
  for (let at = 0, i = 0; at < text.length; at += CHUNK_CHARS, i++) {
    // Cutting inside a surrogate pair is harmless: the halves are joined again before parsing.
    chunks.push({
      key: chunkKey(recordKey, nonce, i),
      value: text.slice(at, at + CHUNK_CHARS),
      expireIn,
    });
  }
  return { stored: { bodyChunks: { nonce, count: chunks.length } }, chunks };
}

/** The body a record stands for. Throws when a chunk is missing (the record is expiring). */
export async function loadBody(
  kv: Deno.Kv,
  recordKey: Deno.KvKey,
  stored: StoredBody,
): Promise<unknown> {
  if (!stored.bodyChunks) return stored.body;
  const { nonce, count } = stored.bodyChunks;
  const parts: string[] = [];
  for (let at = 0; at < count; at += READ_BATCH) {
    const keys = [];
    for (let i = at; i < Math.min(count, at + READ_BATCH); i++) {
      keys.push(chunkKey(recordKey, nonce, i));
    }
    for (const e of await kv.getMany<string[]>(keys)) {
      if (typeof e.value !== "string") {
        throw new Error(`idempotency record ${JSON.stringify(recordKey)} lost a body chunk`);
      }
      parts.push(e.value);
    }
  }
  return JSON.parse(parts.join(""));
}

/**
 * Writes chunks ahead of the record, a few per commit, for a body too large for one atomic
 * operation (KV caps one at 800 KiB). Chunks of a record that is then never written expire.
 */
export async function writeChunks(kv: Deno.Kv, chunks: ExtraSet[]): Promise<void> {
  for (let at = 0; at < chunks.length; at += READ_BATCH) {
    // Plain sets, so a commit refused by a busy local KV file is simply tried again.
    for (let attempt = 0;; attempt++) {
      const op = kv.atomic();
      for (const c of chunks.slice(at, at + READ_BATCH)) {
        op.set(c.key, c.value, { expireIn: c.expireIn });
      }
      if ((await commitOrConflict(op)).ok) break;
      if (attempt >= 20) throw new Error("could not store an idempotency record's body");
    }
  }
}

/** How long a record is kept. */
export const RECORD_TTL_MS = 24 * 3_600_000;

/** The final record: the answer a retry with the same key and body gets back. */
export type Done = {
  state: "done";
  bodyHash: string;
  status: number;
  expiresAt: number;
} & StoredBody;

export interface IdempotencyScope {
  kvKey: Deno.KvKey;
  bodyHash: string;
  expiresAt: number;
  /**
   * Set by a command once its own commit (holding `recordFor`'s write) has succeeded, so the
   * middleware neither overwrites nor releases it. Never set before the commit: a commit that
   * retried into a refusal or threw must leave the record to the middleware.
   */
  stored: boolean;
  /**
   * The versionstamp of this request's in-flight marker. The final record is written only over
   * it: a retry that took the key over after the lease ran out owns it from then on.
   */
  markerVersionstamp: string;
}

/** The write a command adds to its own atomic commit to make its response the replayed one. */
export function recordFor(
  scope: IdempotencyScope | null,
  status: number,
  body: unknown,
): ExtraSet[] {
  if (!scope) return [];
  // A body too large for one KV value goes in chunks written in the same commit.
  const { stored, chunks } = storeBody(scope.kvKey, body, RECORD_TTL_MS);
  const value: Done = {
    state: "done",
    bodyHash: scope.bodyHash,
    status,
    expiresAt: scope.expiresAt,
    ...stored,
  };
  return [
    { key: scope.kvKey, value, expireIn: RECORD_TTL_MS, ifVersionstamp: scope.markerVersionstamp },
    ...chunks,
  ];
}
