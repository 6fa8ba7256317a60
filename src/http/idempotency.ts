/**
 * `Idempotency-Key` (IETF httpapi draft) on POST routes, scoped to the API key and kept 24 h.
 *
 * A retry with the same key and body replays the stored response without doing the work again;
 * the same key with another body is 422; while the first request runs, 409. A command that
 * appends events writes the final record in the same commit as its events (`recordFor`), so a
 * crash between the two can never make a retry build and charge twice.
 *
 * The in-flight marker is held by a short lease (`LEASE_MS`, a separate KV entry naming the
 * process instance) that the request renews every `RENEW_MS` while it runs: a request whose
 * process died frees the key within `LEASE_MS` of its last renewal, so a retry after a restart runs
 * at once instead of waiting out a long lease. A live request that could not renew in time (an
 * event loop stalled for seconds) may be taken over; its own final write is then refused (it
 * checks the marker), so the work is still done once.
 */
import type { MiddlewareHandler } from "hono";
import { commitOrConflict } from "../../events/commit.ts";
import { sha256Hex } from "../kernel/hashing.ts";
import type { Clock } from "../kernel/clock.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";
import { bodyBytes } from "./body-limit.ts";
import {
  type Done,
  type IdempotencyScope,
  loadBody,
  recordFor,
  writeChunks,
} from "../idempotency/record.ts";

const DAY_MS = 24 * 3_600_000;
export const LEASE_MS = 4_000;
const RENEW_MS = 1_000;
/** How long KV keeps a lease entry nobody renews (it only matters while `leaseUntil` is ahead). */
const LEASE_ENTRY_MS = 60_000;
/** This process: named in the leases it holds, so a log or an operator can tell whose they are. */
export const PROCESS_INSTANCE = crypto.randomUUID();
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

interface InFlight {
  state: "in_flight";
  bodyHash: string;
  /** A marker written before leases were kept apart has no token: its own `leaseUntil` holds. */
  leaseUntil: number;
  expiresAt: number;
  /** The lease entry (`leaseKey`) with this token is this marker's. */
  token?: string;
}
/** The lease on an in-flight marker, renewed while its request runs. */
interface Lease {
  token: string;
  instance: string;
  leaseUntil: number;
}
const leaseKey = (kvKey: Deno.KvKey): Deno.KvKey => ["idem_lease", ...kvKey];
type Record_ = InFlight | Done;

/** `idempotent()`: attached to a POST route after `apiKey()` (records are scoped to the key). */
export function idempotent(opts: {
  kv: Deno.Kv;
  clock: Clock;
  /** Test-only: false stands for a process too stalled to renew its leases. */
  renewLeases?: boolean;
}): MiddlewareHandler<AppEnv> {
  return async function idempotent(c, next) {
    const header = c.req.header("idempotency-key");
    if (header === undefined) {
      c.set("idempotency", null);
      // Not `return next()`: that resolves to the Context, which Hono would take for a replay.
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
    const bodyHash = await sha256Hex(await bodyBytes(c));
    const now = opts.clock();

    let markerVersionstamp = "";
    let token = "";
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
      const lease = rec?.state === "in_flight" && rec.token
        ? await opts.kv.get<Lease>(leaseKey(kvKey))
        : null;
      const held = rec?.state === "in_flight" &&
        (rec.token
          ? lease?.value?.token === rec.token && lease.value.leaseUntil > now
          : rec.leaseUntil > now);
      if (held) {
        throw new ApiError(
          "idempotency_key_in_flight",
          "A request with this Idempotency-Key is still being processed; retry shortly",
          { "Idempotency-Key": "in flight" },
          { "Retry-After": "1" },
        );
      }
      token = crypto.randomUUID();
      const marker: InFlight = {
        state: "in_flight",
        bodyHash,
        leaseUntil: now + LEASE_MS,
        expiresAt: now + DAY_MS,
        token,
      };
      const atomic = opts.kv.atomic().check(entry).set(kvKey, marker, { expireIn: DAY_MS });
      // Taking over a dead request's marker: its lease must still be the one that was seen.
      if (lease) atomic.check(lease);
      const ok = await commitOrConflict(
        atomic.set(leaseKey(kvKey), leaseFor(token, now), { expireIn: LEASE_ENTRY_MS }),
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
    const renewal = opts.renewLeases === false
      ? null
      : renewLease(opts.kv, opts.clock, kvKey, token, markerVersionstamp);
    let failed = false;
    try {
      await next();
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      await renewal?.stop();
      if (!scope.stored) await storeOrRelease(opts.kv, scope, c.res, failed);
    }
  };
}

const leaseFor = (token: string, now: number): Lease => ({
  token,
  instance: PROCESS_INSTANCE,
  leaseUntil: now + LEASE_MS,
});

/**
 * Extends the lease every RENEW_MS while the request runs, only over the lease this request wrote
 * (a retry that took the key over owns it then, and renewing stops).
 */
function renewLease(
  kv: Deno.Kv,
  clock: Clock,
  kvKey: Deno.KvKey,
  token: string,
  versionstamp: string,
) {
  let running: Promise<void> | null = null;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = (async () => {
      try {
        const ok = await kv.atomic()
          .check({ key: leaseKey(kvKey), versionstamp })
          .set(leaseKey(kvKey), leaseFor(token, clock()), { expireIn: LEASE_ENTRY_MS })
          .commit();
        if (ok.ok) versionstamp = ok.versionstamp;
        else stop();
      } catch {
        // The KV is closing (shutdown) or busy: the next tick tries again, or the lease lapses.
      } finally {
        running = null;
      }
    })();
  }, RENEW_MS);
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return {
    async stop() {
      stop();
      await running;
    },
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
