/** GET /v1/me: the calling key, its usage today, its limits and its creations' conduct. */
import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { keyLimits } from "../pricing/published-limits.ts";
import type { Services } from "../services.ts";
import { routeNeeds } from "./needs.ts";
import { usageToday } from "../usage/usage-today.ts";
import { kvReads, read } from "../commands/read.ts";
import { EMPTY_CONDUCT, purchaseConductProjection } from "../../projections/conduct.ts";
import { conductView } from "../conduct/policy.ts";

export function meRoutes(s: Services) {
  const { apiKey, rateLimit } = routeNeeds(s);
  return new Hono<AppEnv>().get("/v1/me", apiKey, rateLimit, async (c) => {
    const key = c.get("key");
    const conduct = await read(kvReads(s.kv), purchaseConductProjection, [key.purchaseId]);
    return c.json({
      keyId: key.keyId,
      wallet: key.wallet,
      usageToday: await usageToday(s, key.keyId, key.purchaseId),
      limits: keyLimits(s.config.limits),
      conduct: conductView(conduct ?? EMPTY_CONDUCT, s.config.conduct),
    });
  });
}
