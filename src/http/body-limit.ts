/**
 * `bodyLimit(n)`: a route that reads a body attaches this first, so a body over `n` bytes is cut
 * off with 413 before anything parses it and is never read into memory: a Content-Length over
 * `n` is refused before a byte is read, a body without one as soon as its count passes `n`. The
 * counting is Hono's own body-limit's; what this adds is the seed's error shape, one buffer per
 * body (the declared size, or grown by doubling) shared by everyone who asks (`bodyBytes`), and
 * few large bodies at once.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";

export const KIB = 1024;
/** design.md: 64 KiB for every body but the metadata upload's. */
export const DEFAULT_BODY_LIMIT = 64 * KIB;
export const METADATA_BODY_LIMIT = 2 * KIB * KIB;
/**
 * How many requests with a body over DEFAULT_BODY_LIMIT are read and worked on at once: of
 * declared size (one of them per API key, so one key's slow sender cannot hold them all), and of
 * none (read before the key check; clients seldom send them).
 */
export const LARGE_BODIES_AT_ONCE = 2;
export const UNDECLARED_BODIES_AT_ONCE = 1;
/** A large body holds one of those few places while it arrives, so it must arrive in time. */
export const LARGE_BODY_READ_MS = 10_000;

// The rest of the body is never read, so the connection can't carry another request: closing it
// stops a client from streaming the remainder into a kept-alive socket.
const CLOSE = { Connection: "close" };

export function bodyLimit(maxSize: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () =>
    new ApiError(
      "payload_too_large",
      `Request body is larger than ${maxSize} bytes`,
      { body: `at most ${maxSize} bytes` },
      CLOSE,
    );
  const tooSlow = () =>
    new ApiError("invalid_request", "Request body did not arrive in time", {
      body: `must arrive within ${LARGE_BODY_READ_MS / 1000} s`,
    }, CLOSE);
  const check = (r: Uint8Array | "more" | "too large" | "too slow"): Uint8Array => {
    if (r === "too large" || r === "more") throw tooLarge();
    if (r === "too slow") throw tooSlow();
    return r;
  };
  return async function bodyLimit(c, next) {
    const body = c.req.raw.body;
    if (!body) return await next();
    const length = c.req.raw.headers.has("transfer-encoding")
      ? null
      : Number.parseInt(c.req.raw.headers.get("content-length") ?? "", 10);
    if (length !== null && length > maxSize) throw tooLarge();
    const declared = Number.isSafeInteger(length) ? length : null;
    const input = bufferedReader(body, maxSize, declared);
    // A large body is read and worked on by few requests at once: what a read, a parse or an
    // image decode makes of 2 MiB is several times that, and 32 side by side would not fit an
    // isolate. The others wait with their bodies in the socket. A place is held while its body
    // arrives, so the body must arrive in time, and until the request ends.
    const held: Semaphore[] = [];
    const take = async (pool: Semaphore) => {
      await pool.acquire();
      held.push(pool);
    };
    try {
      let bytes: Promise<Uint8Array> | null = null;
      if (declared === null) {
        // No declared size: counted as it streams, here (Hono's way), so a body past the limit is
        // 413 before any key check. Past 64 KiB it takes a place of its own kind, so slow senders
        // of such bodies (which clients seldom send) hold none of those the others need.
        let r = await input.fill(DEFAULT_BODY_LIMIT, null);
        if (r === "more") {
          await take(undeclaredBodies);
          r = await input.fill(maxSize, LARGE_BODY_READ_MS);
        }
        bytes = Promise.resolve(check(r));
      }
      // A body of declared size is read when first asked for (the idempotency hash, the handler),
      // after the key check: only a keyed request takes a place.
      c.set("body", {
        bytes: () =>
          bytes ??= (async () => {
            const large = declared! > DEFAULT_BODY_LIMIT;
            if (large) {
              await take(keyPlace(c.get("key")?.keyId ?? ""));
              await take(largeBodies);
            }
            return check(await input.fill(maxSize, large ? LARGE_BODY_READ_MS : null));
          })(),
      });
      await next();
    } finally {
      for (const pool of held.reverse()) pool.release();
    }
  };
}

/** The body, read once by `bodyLimit` for everyone who asks; a route without one reads it here. */
export async function bodyBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  return await (c.get("body")?.bytes() ?? c.req.arrayBuffer().then((b) => new Uint8Array(b)));
}

/**
 * The stream into one buffer (the declared size, or grown by doubling). `fill(upTo)` reads on to
 * the end (the bytes), or stops once past `upTo` ("more", to go on with a later call), past
 * `maxSize` ("too large") or after `withinMs` ("too slow"); the last two cancel the stream.
 */
function bufferedReader(
  stream: ReadableStream<Uint8Array>,
  maxSize: number,
  declared: number | null,
) {
  const reader = stream.getReader();
  // Allocated on the first chunk: a body that waits for its place costs nothing meanwhile.
  let buffer = new Uint8Array(0);
  let size = 0;
  const give = async (r: "too large" | "too slow") => {
    await reader.cancel().catch(() => {});
    return r;
  };
  return {
    async fill(upTo: number, withinMs: number | null) {
      let late = false;
      const timer = withinMs === null ? undefined : setTimeout(() => {
        late = true;
        reader.cancel().catch(() => {});
      }, withinMs);
      try {
        while (size <= upTo) {
          const { done, value } = await reader.read();
          if (late) return await give("too slow");
          if (done) return buffer.subarray(0, size);
          const end = size + value.length;
          if (end > maxSize) return await give("too large");
          if (end > buffer.length) {
            const want = Math.max(end, declared ?? 0, buffer.length * 2, 16 * KIB);
            const grown = new Uint8Array(Math.min(maxSize, want));
            grown.set(buffer.subarray(0, size));
            buffer = grown;
          }
          buffer.set(value, size);
          size = end;
        }
        return "more" as const;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

type Semaphore = ReturnType<typeof semaphore>;
const largeBodies = semaphore(LARGE_BODIES_AT_ONCE);
const undeclaredBodies = semaphore(UNDECLARED_BODIES_AT_ONCE);

/** Each key's one place, kept only while taken or waited for. */
const byKey = new Map<string, Semaphore>();
function keyPlace(keyId: string): Semaphore {
  let place = byKey.get(keyId);
  if (!place) {
    place = semaphore(1, () => byKey.delete(keyId));
    byKey.set(keyId, place);
  }
  return place;
}

/** `idle` runs when every permit is back and nobody waits. */
function semaphore(permits: number, idle?: () => void) {
  const all = permits;
  const waiting: (() => void)[] = [];
  return {
    async acquire() {
      if (permits > 0) permits--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next) next();
      else if (++permits === all) idle?.();
    },
  };
}
