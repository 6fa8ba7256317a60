/** GET /v1/me: the calling key, its usage today and its limits. */
import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { keyLimits } from "../pricing/published-limits.ts";
import type { Services } from "../services.ts";
import { routeNeeds } from "./needs.ts";
import { usageToday } from "../usage/usage-today.ts";

export function meRoutes(s: Services) {
  const { apiKey, rateLimit } = routeNeeds(s);
  return new Hono<AppEnv>().get("/v1/me", apiKey, rateLimit, async (c) => {
    const key = c.get("key");
    return c.json({
      keyId: key.keyId,
      wallet: key.wallet,
      usageToday: await usageToday(s, key.keyId, key.purchaseId),
      limits: keyLimits(s.config.limits),
    });
  });
}
