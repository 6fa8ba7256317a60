/**
 * The middleware a keyed /v1 route attaches where it is defined, in the order a request meets it:
 *
 *   app.post("/v1/x", bodyLimit(n), apiKey, rateLimit, idempotent, handler)
 *
 * `bodyLimit` first (a huge body is 413 before any key check), then `apiKey`, then `rateLimit`
 * (it counts per key), then `idempotent` (records are scoped to the key). Built once per services,
 * so every route counts a key's requests in the same limiter.
 */
import type { MiddlewareHandler } from "hono";
import { apiKey } from "../http/auth.ts";
import type { AppEnv } from "../http/env.ts";
import { idempotent } from "../http/idempotency.ts";
import { rateLimit } from "../http/rate-limit.ts";
import type { Services } from "../services.ts";

export interface RouteNeeds {
  apiKey: MiddlewareHandler<AppEnv>;
  rateLimit: MiddlewareHandler<AppEnv>;
  idempotent: MiddlewareHandler<AppEnv>;
}

const built = new WeakMap<Services, RouteNeeds>();

export function routeNeeds(s: Services): RouteNeeds {
  let needs = built.get(s);
  if (!needs) {
    needs = {
      apiKey: apiKey({
        kv: s.kv,
        pepper: s.pepper,
        prefix: s.config.keyPrefix,
        portalUrl: `${s.config.publicBaseUrl}/`,
      }),
      rateLimit: rateLimit({ kv: s.kv, limit: s.config.limits.requestsPerHour, clock: s.clock }),
      idempotent: idempotent({
        kv: s.kv,
        clock: s.clock,
        renewLeases: s.config.idempotencyLeaseRenewalForTests,
      }),
    };
    built.set(s, needs);
  }
  return needs;
}
