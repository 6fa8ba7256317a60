/**
 * The HTTP application: middleware in the order a request meets it, then the routes. Handlers
 * only authenticate, parse, call one command and map its result.
 */
import { GuardChangedError } from "../events/store.ts";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./http/env.ts";
import { ApiError } from "./kernel/errors.ts";
import { bearerAuth } from "./http/auth.ts";
import { hostedOrigin } from "./http/hosted-origin.ts";
import { idempotency } from "./http/idempotency.ts";
import { rateLimit } from "./http/rate-limit.ts";
import { requestLog } from "./http/request-log.ts";
import { routeExists } from "./http/route-exists.ts";
import { rpcBusyAnswer } from "./http/rpc-busy.ts";
import { meRoutes } from "./routes/me.ts";
import { pricingRoutes } from "./routes/pricing.ts";
import type { Services } from "./services.ts";
import { traceRequests } from "./telemetry/tracing.ts";

export const KIB = 1024;
export const METADATA_BODY_LIMIT = 2 * KIB * KIB;
export const DEFAULT_BODY_LIMIT = 64 * KIB;

/** Extra route groups other modules mount (token build, metadata, relay, portal, admin). */
export type RouteGroup = (s: Services) => Hono<AppEnv>;

/** Keyed /v1 endpoints; everything else under /v1 (pricing, openapi) is public. */
const PUBLIC_V1 = new Set(["/v1/pricing", "/v1/openapi.json", "/v1/health"]);
const IDEMPOTENT_POSTS = new Set(["/v1/tokens", "/v1/metadata", "/v1/transactions"]);

export function createApp(s: Services, groups: RouteGroup[] = []): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requestLog(s.logger));
  app.use("*", traceRequests());
  app.use("*", hostedOrigin({ hostedBaseUrl: s.config.hostedBaseUrl }));

  app.use("/v1/*", async function apiHeaders(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  });
  // Every endpoint that takes a body, the portal's included (design.md: 64 KiB but metadata), is
  // cut off with 413 before parsing, so a huge body is never read into memory.
  app.use("*", async function bodyLimits(c, next) {
    const max = c.req.path === "/v1/metadata" ? METADATA_BODY_LIMIT : DEFAULT_BODY_LIMIT;
    return await bodyLimit({
      maxSize: max,
      onError: () => {
        // The rest of the body is never read, so the connection can't carry another request:
        // closing it stops a client from streaming the remainder into a kept-alive socket.
        throw new ApiError(
          "payload_too_large",
          `Request body is larger than ${max} bytes`,
          { body: `at most ${max} bytes` },
          { Connection: "close" },
        );
      },
    })(c, next);
  });

  const auth = bearerAuth({ kv: s.kv, pepper: s.pepper, prefix: s.config.keyPrefix });
  const limit = rateLimit({ kv: s.kv, limit: s.config.limits.requestsPerHour, clock: s.clock });
  const idem = idempotency({
    kv: s.kv,
    clock: s.clock,
    renewLeases: s.config.idempotencyLeaseRenewalForTests,
  });
  const known = routeExists(app);
  app.use("/v1/*", async function keyed(c, next) {
    // Unknown paths fall through to notFound: a 404 whether or not the caller has a key.
    if (PUBLIC_V1.has(c.req.path) || !known(c.req.path)) return next();
    await auth(c, async () => {
      await limit(c, async () => {
        if (c.req.method === "POST" && IDEMPOTENT_POSTS.has(c.req.path)) {
          // A replayed response comes back as a value, not through the next handler.
          const replay = await idem(c, next);
          if (replay instanceof Response) c.res = replay;
          return;
        }
        c.set("idempotency", null);
        await next();
      });
    });
  });

  app.route("/", pricingRoutes(s));
  app.route("/", meRoutes(s));
  for (const g of groups) app.route("/", g(s));

  app.notFound((c) => c.json(new ApiError("not_found", "No such endpoint").body(), 404));
  app.onError((err, c) => {
    err = rpcBusyAnswer(err) ?? err;
    if (err instanceof GuardChangedError) {
      // This request's Idempotency-Key lease ran out and a retry owns the key now: nothing was
      // written here, and the retry's answer is the one to get.
      err = new ApiError(
        "idempotency_key_in_flight",
        "A retry with this Idempotency-Key took over this request; retry shortly for its answer",
        { "Idempotency-Key": "taken over by a retry" },
        { "Retry-After": "1" },
      );
    }
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return c.json(err.body(), err.status as 400);
    }
    s.logger.log("error", "unhandled error", {
      requestId: c.get("requestId"),
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack?.split("\n").slice(0, 6).join(" | ") : undefined,
    });
    const e = new ApiError("server_error", "Something went wrong on our side; retry");
    return c.json(e.body(), 500);
  });
  return app;
}
