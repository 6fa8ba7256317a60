/** /v1/webhooks: a key's webhook endpoints, their delivery log, and replay of a delivery. */
import { Hono } from "hono";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import type { Services } from "../services.ts";
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

  app.post("/v1/webhooks", async (c) => {
    const body = await readBody(c, RegisterRequest);
    return c.json(await registerEndpoint(s, c.get("key"), body), 201);
  });

  app.get("/v1/webhooks", async (c) => c.json({ items: await listEndpoints(s, c.get("key")) }));

  app.get(
    "/v1/webhooks/:id",
    async (c) => c.json(endpointView(await ownEndpoint(s, c.get("key"), c.req.param("id")))),
  );

  app.delete("/v1/webhooks/:id", async (c) => {
    await deleteEndpoint(s, c.get("key"), c.req.param("id"));
    return c.body(null, 204);
  });

  app.get(
    "/v1/webhooks/:id/deliveries",
    async (c) => c.json(await listDeliveries(s, c.get("key"), c.req.param("id"), c.req.query())),
  );

  app.post("/v1/webhooks/:id/deliveries/:deliveryId/replay", async (c) =>
    c.json(
      await replayDelivery(s, c.get("key"), c.req.param("id"), c.req.param("deliveryId")),
      202,
    ));

  return app;
}
