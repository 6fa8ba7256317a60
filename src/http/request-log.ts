/**
 * Gives every request an id (`X-Request-Id`) and writes one structured log line per request:
 * method, path, status, ms and the key id, never the key itself.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import type { Logger } from "../kernel/logger.ts";

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async function requestLog(c, next) {
    const incoming = c.req.header("x-request-id");
    // A caller's id is echoed only when harmless, so it can't inject into our logs.
    const id = incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    const started = performance.now();
    await next();
    c.header("X-Request-Id", id);
    logger.log(c.res.status >= 500 ? "error" : "info", "request", {
      requestId: id,
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      keyId: c.get("key")?.keyId ?? null,
    });
  };
}
