/** /v1/webhooks: a key's webhook endpoints, their delivery log, and replay of a delivery. */
import { Hono } from "hono";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import type { Services } from "../services.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import { routeNeeds } from "./needs.ts";
import {
  deleteEndpoint,
  endpointView,
  listDeliveries,
  listEndpoints,
  ownEndpoint,
  registerEndpoint,
  RegisterRequest,
  replayDelivery,
} from "../webhooks/endpoints.ts";

export function webhookRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const { apiKey, rateLimit } = routeNeeds(s);
  const limit = bodyLimit(DEFAULT_BODY_LIMIT);

  app.post("/v1/webhooks", limit, apiKey, rateLimit, async (c) => {
    const body = await readBody(c, RegisterRequest);
    return c.json(await registerEndpoint(s, c.get("key"), body), 201);
  });

  app.get(
    "/v1/webhooks",
    apiKey,
    rateLimit,
    async (c) => c.json({ items: await listEndpoints(s, c.get("key")) }),
  );

  app.get(
    "/v1/webhooks/:id",
    apiKey,
    rateLimit,
    async (c) => c.json(endpointView(await ownEndpoint(s, c.get("key"), c.req.param("id")))),
  );

  app.delete("/v1/webhooks/:id", apiKey, rateLimit, async (c) => {
    await deleteEndpoint(s, c.get("key"), c.req.param("id"));
    return c.body(null, 204);
  });

  app.get(
    "/v1/webhooks/:id/deliveries",
    apiKey,
    rateLimit,
    async (c) => c.json(await listDeliveries(s, c.get("key"), c.req.param("id"), c.req.query())),
  );

  app.post(
    "/v1/webhooks/:id/deliveries/:deliveryId/replay",
    limit,
    apiKey,
    rateLimit,
    async (c) =>
      c.json(
        await replayDelivery(s, c.get("key"), c.req.param("id"), c.req.param("deliveryId")),
        202,
      ),
  );

  return app;
}
