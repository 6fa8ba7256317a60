/**
 * POST /v1/transactions (relay) and GET /v1/transactions/{signature} (verify): parse, call the
 * command in src/creation, answer.
 */
import { Hono } from "hono";
import { isSignature } from "../kernel/base58.ts";
import { relayTransaction } from "../creation/relay.ts";
import { RelayRequest } from "../creation/relay-request.ts";
import { verifySignature } from "../creation/verify.ts";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import { routeNeeds } from "./needs.ts";

export function transactionRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const { apiKey, rateLimit, idempotent } = routeNeeds(s);
  const limit = bodyLimit(DEFAULT_BODY_LIMIT);

  app.post("/v1/transactions", limit, apiKey, rateLimit, idempotent, async (c) => {
    const { transaction } = await readBody(c, RelayRequest);
    const body = await relayTransaction(s, c.get("key"), transaction, c.get("idempotency"));
    return c.json(body, 202);
  });

  app.get("/v1/transactions/:signature", apiKey, rateLimit, async (c) => {
    const signature = c.req.param("signature");
    if (!isSignature(signature)) {
      throw new ApiError("invalid_request", "Not a transaction signature", {
        signature: "base58 of 64 bytes",
      });
    }
    return c.json(await verifySignature(s, c.get("key"), signature));
  });

  return app;
}
