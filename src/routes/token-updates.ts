/**
 * POST /v1/tokens/{mint}/update (build an unsigned update transaction for the token's current
 * authority) and GET /v1/tokens/{mint}/updates/{updateId} (the update's record; with
 * `?signature=` its landed transaction is read back and the outcome recorded).
 */
import { Hono } from "hono";
import { currentWellKnownMatcher } from "../admin/well-known-names.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import { readJson } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import type { Services } from "../services.ts";
import { buildUpdate } from "../tokens/update-build.ts";
import { parseUpdateRequest } from "../tokens/update-request.ts";
import { verifyUpdate } from "../creation/update-verify.ts";
import { routeNeeds } from "./needs.ts";
import { mintParam, signatureParam, updateIdParam } from "./params.ts";

export function tokenUpdateRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const { apiKey, rateLimit, idempotent } = routeNeeds(s);
  const limit = bodyLimit(DEFAULT_BODY_LIMIT);

  app.post("/v1/tokens/:mint/update", limit, apiKey, rateLimit, idempotent, async (c) => {
    const mint = mintParam(c.req.param("mint"));
    const { publicBaseUrl, hostedBaseUrl } = s.config;
    const wellKnown = await currentWellKnownMatcher(s);
    const req = parseUpdateRequest(await readJson(c), wellKnown, hostedBaseUrl ?? publicBaseUrl);
    return c.json(await buildUpdate(s, c.get("key"), mint, req, c.get("idempotency")), 201);
  });

  app.get("/v1/tokens/:mint/updates/:updateId", apiKey, rateLimit, async (c) => {
    const mint = mintParam(c.req.param("mint"));
    const updateId = updateIdParam(c.req.param("updateId"));
    const sig = c.req.query("signature") ?? null;
    if (sig !== null) signatureParam(sig);
    return c.json(await verifyUpdate(s, c.get("key"), mint, updateId, sig));
  });

  return app;
}
