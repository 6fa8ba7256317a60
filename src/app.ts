/**
 * The HTTP application: the middleware every request meets, then the routes. Each route attaches
 * what it needs itself (body limit, API key, rate limit, idempotency: src/routes/needs.ts), so a
 * path no route serves is a 404 before any of them runs. Handlers only parse, call one command
 * and map its result.
 */
import { GuardChangedError } from "../events/store.ts";
import { type Context, Hono, type Next } from "hono";
import type { AppEnv, RouteGroup } from "./http/env.ts";
import { ApiError } from "./kernel/errors.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "./http/body-limit.ts";
import { hostedOrigin } from "./http/hosted-origin.ts";
import { requestLog } from "./http/request-log.ts";
import { rpcBusyAnswer } from "./http/rpc-busy.ts";
import { meRoutes } from "./routes/me.ts";
import { routeNeeds } from "./routes/needs.ts";
import { pricingRoutes } from "./routes/pricing.ts";
import type { Services } from "./services.ts";
import { traceRequests } from "./telemetry/tracing.ts";

/** Extra route groups other modules mount (token build, metadata, relay, portal, admin). */
export function createApp(s: Services, groups: RouteGroup[] = []): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requestLog(s.logger));
  app.use("*", headLikeGet);
  app.use("*", traceRequests());
  app.use("*", hostedOrigin({ hostedBaseUrl: s.config.hostedBaseUrl }));

  app.use("/v1/*", async function apiHeaders(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  });
  app.route("/", pricingRoutes(s));
  app.route("/", meRoutes(s));
  for (const g of groups) app.route("/", g(s));
  wrongMethods(app, s);

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

/**
 * A known path asked with a method it does not serve (DELETE /v1/pricing) is 405 with `Allow`,
 * the methods the route table serves there. A keyed path still asks for the key first (401
 * without one), as for its own methods. Registered last, so a route that serves the method answers
 * first and this never runs for it.
 */
function wrongMethods(app: Hono<AppEnv>, s: Services) {
  const { apiKey, rateLimit } = routeNeeds(s);
  const allowed = new Map<string, Set<string>>();
  const keyed = new Set<string>();
  for (const r of app.routes) {
    if (r.handler === apiKey) keyed.add(r.path);
    if (r.method === "ALL") continue; // middleware, not a route
    const methods = allowed.get(r.path) ?? new Set<string>();
    methods.add(r.method);
    if (r.method === "GET") methods.add("HEAD");
    allowed.set(r.path, methods);
  }
  const limit = bodyLimit(DEFAULT_BODY_LIMIT);
  for (const [path, methods] of allowed) {
    const allow = [...methods].sort().join(", ");
    const refuse = (c: Context<AppEnv>) => {
      c.header("Allow", allow);
      const e = new ApiError(
        "method_not_allowed",
        `${c.req.method} is not served here; use ${allow}`,
      );
      return c.json(e.body(), 405);
    };
    if (keyed.has(path)) app.all(path, limit, apiKey, rateLimit, refuse);
    else app.all(path, refuse);
  }
}

/**
 * HEAD answers what GET would, headers included, without the body: Hono routes HEAD to the GET
 * handler and drops the body, so the length the body would have is set here.
 */
async function headLikeGet(c: Context<AppEnv>, next: Next) {
  await next();
  if (c.req.method !== "HEAD" || !c.res.body || c.res.headers.has("content-length")) return;
  const bytes = (await c.res.clone().arrayBuffer()).byteLength;
  c.res.headers.set("Content-Length", String(bytes));
}
