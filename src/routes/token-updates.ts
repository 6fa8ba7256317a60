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
import { isAddress } from "../kernel/base58.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import { buildUpdate } from "../tokens/update-build.ts";
import { parseUpdateRequest } from "../tokens/update-request.ts";
import { verifyUpdate } from "../creation/update-verify.ts";
import { routeNeeds } from "./needs.ts";

const UPDATE_ID = /^[0-9a-f]{32}$/;
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

export function tokenUpdateRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const { apiKey, rateLimit, idempotent } = routeNeeds(s);
  const limit = bodyLimit(DEFAULT_BODY_LIMIT);

  app.post("/v1/tokens/:mint/update", limit, apiKey, rateLimit, idempotent, async (c) => {
    const mint = param(
      c.req.param("mint"),
      isAddress,
      "mint",
      "must be a base58 Solana address (32 bytes)",
    );
    const { publicBaseUrl, hostedBaseUrl } = s.config;
    const wellKnown = await currentWellKnownMatcher(s);
    const req = parseUpdateRequest(await readJson(c), wellKnown, hostedBaseUrl ?? publicBaseUrl);
    return c.json(await buildUpdate(s, c.get("key"), mint, req, c.get("idempotency")), 201);
  });

  app.get("/v1/tokens/:mint/updates/:updateId", apiKey, rateLimit, async (c) => {
    const mint = param(
      c.req.param("mint"),
      isAddress,
      "mint",
      "must be a base58 Solana address (32 bytes)",
    );
    const updateId = param(
      c.req.param("updateId"),
      (v) => UPDATE_ID.test(v),
      "updateId",
      "must be 32 lower-case hex characters",
    );
    const sig = c.req.query("signature") ?? null;
    if (sig !== null) {
      param(
        sig,
        (v) => SIGNATURE.test(v),
        "signature",
        "must be a base58 transaction signature",
      );
    }
    return c.json(await verifyUpdate(s, c.get("key"), mint, updateId, sig));
  });

  return app;
}

function param(v: string, ok: (v: string) => boolean, field: string, message: string): string {
  if (!ok(v)) throw new ApiError("invalid_request", "Request is invalid", { [field]: message });
  return v;
}
