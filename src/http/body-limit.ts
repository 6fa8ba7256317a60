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
/** How many requests with a body over DEFAULT_BODY_LIMIT are read and worked on at once. */
export const LARGE_BODIES_AT_ONCE = 2;
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
  const read = async (
    body: ReadableStream<Uint8Array>,
    declared: number | null,
    ms: number | null,
  ) => {
    const bytes = await readAtMost(body, maxSize, declared, ms);
    if (bytes === "too large") throw tooLarge();
    if (bytes === "too slow") throw tooSlow();
    return bytes;
  };
  return async function bodyLimit(c, next) {
    const body = c.req.raw.body;
    if (!body) return await next();
    const length = c.req.raw.headers.has("transfer-encoding")
      ? null
      : Number.parseInt(c.req.raw.headers.get("content-length") ?? "", 10);
    if (length !== null && length > maxSize) throw tooLarge();
    const declared = Number.isSafeInteger(length) ? length : null;
    // A body of no declared size is counted as it streams, here (Hono's way), so one past the
    // limit is 413 before any key check. One with a size is read when first asked for.
    const streamed = declared === null ? await read(body, null, null) : null;
    let bytes: Promise<Uint8Array> | null = null;
    let held = false;
    c.set("body", {
      bytes: () =>
        bytes ??= (async () => {
          // A large body is read and worked on by few requests at once: what a read, a parse or
          // an image decode makes of 2 MiB is several times that, and 32 side by side would not
          // fit an isolate. The others wait with their bodies in the socket. The place is taken
          // when the body is first asked for, after the key check, and is held while the body
          // arrives, so the body must arrive in time.
          if ((declared ?? streamed!.length) > DEFAULT_BODY_LIMIT) {
            await largeBodies.acquire();
            held = true;
          }
          return streamed ?? await read(body, declared, held ? LARGE_BODY_READ_MS : null);
        })(),
    });
    try {
      await next();
    } finally {
      if (held) largeBodies.release();
    }
  };
}

/** The body, read once by `bodyLimit` for everyone who asks; a route without one reads it here. */
export async function bodyBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  return await (c.get("body")?.bytes() ?? c.req.arrayBuffer().then((b) => new Uint8Array(b)));
}

/** The stream's bytes in one buffer; the stream is cancelled once past `maxSize` or `withinMs`. */
async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxSize: number,
  declared: number | null,
  withinMs: number | null,
): Promise<Uint8Array | "too large" | "too slow"> {
  const reader = stream.getReader();
  let late = false;
  const timer = withinMs === null ? undefined : setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, withinMs);
  try {
    let buffer = new Uint8Array(declared ?? Math.min(maxSize, 16 * KIB));
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (late) return "too slow";
      if (done) return buffer.subarray(0, size);
      const end = size + value.length;
      if (end > maxSize) {
        await reader.cancel().catch(() => {});
        return "too large";
      }
      if (end > buffer.length) {
        const grown = new Uint8Array(Math.min(maxSize, Math.max(end, buffer.length * 2)));
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(value, size);
      size = end;
    }
  } finally {
    clearTimeout(timer);
  }
}

const largeBodies = semaphore(LARGE_BODIES_AT_ONCE);

function semaphore(permits: number) {
  const waiting: (() => void)[] = [];
  return {
    async acquire() {
      if (permits > 0) permits--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next) next();
      else permits++;
    },
  };
}
