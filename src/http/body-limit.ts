/**
 * `bodyLimit(n)`: a route that reads a body attaches this first, so a body over `n` bytes is cut
 * off with 413 before anything parses it and is never read into memory: a Content-Length over
 * `n` is refused before a byte is read, a body without one as soon as its count passes `n`. The
 * counting is Hono's own body-limit's; what this adds is the seed's error shape and one buffer per
 * body (the declared size, or grown by doubling), kept for `bodyBytes`, instead of Hono's buffer
 * plus the copies a second read of the request makes.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";

export const KIB = 1024;
/** design.md: 64 KiB for every body but the metadata upload's. */
export const DEFAULT_BODY_LIMIT = 64 * KIB;
export const METADATA_BODY_LIMIT = 2 * KIB * KIB;

export function bodyLimit(maxSize: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () =>
    // The rest of the body is never read, so the connection can't carry another request:
    // closing it stops a client from streaming the remainder into a kept-alive socket.
    new ApiError(
      "payload_too_large",
      `Request body is larger than ${maxSize} bytes`,
      { body: `at most ${maxSize} bytes` },
      { Connection: "close" },
    );
  return async function bodyLimit(c, next) {
    const body = c.req.raw.body;
    if (!body) return await next();
    const length = c.req.raw.headers.has("transfer-encoding")
      ? null
      : Number.parseInt(c.req.raw.headers.get("content-length") ?? "", 10);
    if (length !== null && length > maxSize) throw tooLarge();
    const bytes = await readAtMost(body, maxSize, Number.isSafeInteger(length) ? length : null);
    if (!bytes) throw tooLarge();
    c.set("body", bytes);
    if (bytes.length <= DEFAULT_BODY_LIMIT) return await next();
    // A large body is worked on by few requests at once: what a parse, a validation or an image
    // decode makes of 2 MiB can be ten times that, and 32 of them side by side would not fit an
    // isolate. The permit is taken once the body is in, so a slow sender holds none.
    await largeBodies.acquire();
    try {
      await next();
    } finally {
      largeBodies.release();
    }
  };
}

/** How many requests with a body over DEFAULT_BODY_LIMIT are worked on at once. */
export const LARGE_BODIES_AT_ONCE = 4;
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

/** The body as read by `bodyLimit`; a route without one reads it here. */
export async function bodyBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  return c.get("body") ?? new Uint8Array(await c.req.arrayBuffer());
}

/** The stream's bytes in one buffer, or null (and the stream cancelled) once past `maxSize`. */
async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxSize: number,
  declared: number | null,
): Promise<Uint8Array | null> {
  let buffer = new Uint8Array(declared ?? Math.min(maxSize, 16 * KIB));
  let size = 0;
  for await (const chunk of stream) {
    const end = size + chunk.length;
    if (end > maxSize) return null;
    if (end > buffer.length) {
      const grown = new Uint8Array(Math.min(maxSize, Math.max(end, buffer.length * 2)));
      grown.set(buffer.subarray(0, size));
      buffer = grown;
    }
    buffer.set(chunk, size);
    size = end;
  }
  return buffer.subarray(0, size);
}
