/**
 * With HOSTED_BASE_URL set, hosted files and everything else live on two origins: the hosted
 * origin answers only /m/ and /i/ (a 404 for the API and the portal, so a hosted file can never
 * share an origin with them), and the portal's origin sends /m/ and /i/ there with a permanent
 * redirect, so URLs already written on chain with the old origin keep resolving. Without it,
 * nothing changes.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";

const HOSTED_PATH = /^\/[mi]\//;

export function hostedOrigin(opts: { hostedBaseUrl: string | null }): MiddlewareHandler<AppEnv> {
  const hosted = opts.hostedBaseUrl === null ? null : new URL(opts.hostedBaseUrl);
  return async function hostedOrigin(c, next) {
    if (hosted === null) return await next();
    const url = new URL(c.req.url);
    const onHosted = url.host === hosted.host;
    const hostedPath = HOSTED_PATH.test(url.pathname);
    if (onHosted && !hostedPath) {
      const e = new ApiError("not_found", "This origin serves hosted files only");
      return c.json(e.body(), 404);
    }
    if (!onHosted && hostedPath && (c.req.method === "GET" || c.req.method === "HEAD")) {
      return c.redirect(`${hosted.origin}${url.pathname}`, 308);
    }
    await next();
  };
}
