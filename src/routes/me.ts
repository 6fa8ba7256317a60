import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { dailyRequestKey } from "../http/rate-limit.ts";
import { projectionKey } from "../../events/keys.ts";
import { type UsageDoc, utcDay } from "../../projections/usage.ts";
import type { Services } from "../services.ts";

export async function usageToday(s: Services, keyId: string, purchaseId: string) {
  const day = utcDay(s.clock());
  const [requests, usage] = await s.kv.getMany<[number, UsageDoc]>([
    dailyRequestKey(keyId, day),
    projectionKey("usage", [purchaseId, day]),
  ]);
  return {
    requests: requests.value ?? 0,
    tokens: usage.value?.tokens ?? 0,
    metadata: usage.value?.metadata ?? 0,
  };
}

export function meRoutes(s: Services) {
  return new Hono<AppEnv>().get("/v1/me", async (c) => {
    const key = c.get("key");
    const { limits } = s.config;
    return c.json({
      keyId: key.keyId,
      wallet: key.wallet,
      usageToday: await usageToday(s, key.keyId, key.purchaseId),
      limits: {
        tokensPerDay: limits.tokensPerDay,
        metadataPerDay: limits.metadataPerDay,
        requestsPerHour: limits.requestsPerHour,
      },
    });
  });
}
