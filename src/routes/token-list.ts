/** GET /v1/tokens: the calling key's builds, newest first, with an opaque cursor. */
import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { listBuilds, parseListQuery } from "../listing/list-builds.ts";
import type { Services } from "../services.ts";
import { routeNeeds } from "./needs.ts";

export function tokenListRoutes(s: Services) {
  const { apiKey, rateLimit } = routeNeeds(s);
  return new Hono<AppEnv>().get("/v1/tokens", apiKey, rateLimit, async (c) => {
    const req = parseListQuery(c.req.query());
    return c.json(await listBuilds(s.kv, c.get("key").keyId, req));
  });
}
