/**
 * `bodyLimit(n)`: a route that reads a body attaches this first, so a body over `n` bytes is cut
 * off with 413 before anything parses it and is never read into memory. Hono's own body-limit
 * does the counting (Content-Length, or the streamed bytes); this adds the seed's error shape.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";

export const KIB = 1024;
/** design.md: 64 KiB for every body but the metadata upload's. */
export const DEFAULT_BODY_LIMIT = 64 * KIB;
export const METADATA_BODY_LIMIT = 2 * KIB * KIB;

export function bodyLimit(maxSize: number): MiddlewareHandler<AppEnv> {
  const limit = honoBodyLimit({
    maxSize,
    onError: () => {
      // The rest of the body is never read, so the connection can't carry another request:
      // closing it stops a client from streaming the remainder into a kept-alive socket.
      throw new ApiError(
        "payload_too_large",
        `Request body is larger than ${maxSize} bytes`,
        { body: `at most ${maxSize} bytes` },
        { Connection: "close" },
      );
    },
  });
  return async function bodyLimit(c, next) {
    return await limit(c, next);
  };
}
