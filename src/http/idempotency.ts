/**
 * `Idempotency-Key` (IETF httpapi draft) on POST routes, scoped to the API key and kept 24 h.
 *
 * A retry with the same key and body replays the stored response without doing the work again;
 * the same key with another body is 422; while the first request runs, 409. A command that
 * appends events writes the final record in the same commit as its events (`recordFor`), so a
 * crash between the two can never make a retry build and charge twice. The in-flight marker is a
 * lease: a request that died holding it frees the key after `LEASE_MS`.
 */
import type { MiddlewareHandler } from "hono";
import { commitOrConflict } from "../../events/commit.ts";
import { sha256Hex } from "../../events/hash.ts";
import type { ExtraSet } from "../../events/store.ts";
import type { Clock } from "../clock.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";
import { loadBody, storeBody, type StoredBody, writeChunks } from "./idempotency-record.ts";

const DAY_MS = 24 * 3_600_000;
const LEASE_MS = 60_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

interface InFlight {
  state: "in_flight";
  bodyHash: string;
  leaseUntil: number;
  expiresAt: number;
}
type Done = {
  state: "done";
  bodyHash: string;
  status: number;
  expiresAt: number;
} & StoredBody;
type Record_ = InFlight | Done;

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
  const { stored, chunks } = storeBody(scope.kvKey, body, DAY_MS);
  const value: Done = {
    state: "done",
    bodyHash: scope.bodyHash,
    status,
    expiresAt: scope.expiresAt,
    ...stored,
  };
  return [
    { key: scope.kvKey, value, expireIn: DAY_MS, ifVersionstamp: scope.markerVersionstamp },
    ...chunks,
  ];
}

export function idempotency(opts: { kv: Deno.Kv; clock: Clock }): MiddlewareHandler<AppEnv> {
  return async function idempotency(c, next) {
    const header = c.req.header("idempotency-key");
    if (header === undefined) {
      c.set("idempotency", null);
      // Not `return next()`: that resolves to the Context, which app.ts would take for a replay.
      await next();
      return;
    }
    if (!KEY_SHAPE.test(header)) {
      throw new ApiError("invalid_request", "Idempotency-Key is invalid", {
        "Idempotency-Key": "1 to 255 printable ASCII characters",
      });
    }
    const keyId = c.get("key").keyId;
    const kvKey: Deno.KvKey = ["idem", keyId, new URL(c.req.url).pathname, header];
    const bodyHash = await sha256Hex(await c.req.text());
    const now = opts.clock();

    let markerVersionstamp = "";
    for (;;) {
      const entry = await opts.kv.get<Record_>(kvKey);
      const rec = entry.value && entry.value.expiresAt > now ? entry.value : null;
      if (rec && rec.bodyHash !== bodyHash) {
        throw new ApiError(
          "idempotency_key_reused",
          "This Idempotency-Key was used with a different request body",
          { "Idempotency-Key": "already used with another body" },
        );
      }
      if (rec?.state === "done") {
        c.header("Idempotent-Replayed", "true");
        const body = await loadBody(opts.kv, kvKey, rec);
        return c.json(body as Record<string, unknown>, rec.status as 200);
      }
      if (rec?.state === "in_flight" && rec.leaseUntil > now) {
        throw new ApiError(
          "idempotency_key_in_flight",
          "A request with this Idempotency-Key is still being processed; retry shortly",
          { "Idempotency-Key": "in flight" },
          { "Retry-After": "1" },
        );
      }
      const marker: InFlight = {
        state: "in_flight",
        bodyHash,
        leaseUntil: now + LEASE_MS,
        expiresAt: now + DAY_MS,
      };
      const ok = await commitOrConflict(
        opts.kv.atomic().check(entry).set(kvKey, marker, { expireIn: DAY_MS }),
      );
      if (ok.ok) {
        markerVersionstamp = ok.versionstamp;
        break;
      }
    }

    const scope: IdempotencyScope = {
      kvKey,
      bodyHash,
      expiresAt: now + DAY_MS,
      stored: false,
      markerVersionstamp,
    };
    c.set("idempotency", scope);
    let failed = false;
    try {
      await next();
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      if (!scope.stored) await storeOrRelease(opts.kv, scope, c.res, failed);
    }
  };
}

/**
 * Client errors are final and replayed like successes. A server fault or a 429 releases the key:
 * both tell the client to retry later, and that retry must actually run (a daily limit that has
 * reset must not keep answering 429 from the record). So does a 401 from a key revoked mid-request:
 * the key id's new secret (after a rotation, or a lifted ban) must be able to run it.
 */
async function storeOrRelease(
  kv: Deno.Kv,
  scope: IdempotencyScope,
  res: Response,
  failed: boolean,
) {
  // A command may have committed the final record and then failed (a crash after the commit, an
  // error on the way out): that record is the truth, so it is never released or overwritten.
  const current = await kv.get<Record_>(scope.kvKey);
  if (current.value?.state === "done") return;
  // The lease ran out and a retry took the key over: it is that request's to store or release.
  if (current.versionstamp !== scope.markerVersionstamp) return;
  if (failed || res.status >= 500 || res.status === 429 || res.status === 401) {
    await commitOrConflict(kv.atomic().check(current).delete(scope.kvKey));
    return;
  }
  let body: unknown = null;
  try {
    body = await res.clone().json();
  } catch {
    body = null;
  }
  const [set, ...chunks] = recordFor(scope, res.status, body);
  // Chunks first, in commits of their own: a body of any size is stored, never refused by KV.
  await writeChunks(kv, chunks);
  await commitOrConflict(
    kv.atomic().check(current).set(set.key, set.value, { expireIn: set.expireIn }),
  );
}
