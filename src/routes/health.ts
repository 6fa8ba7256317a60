/** GET /v1/health: readiness of KV and RPC, for load balancers; needs no key. */
import { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../kernel/errors.ts";
import { readinessProbe } from "../health/readiness.ts";
import type { Services } from "../services.ts";

export function healthRoutes(s: Services) {
  const readiness = readinessProbe(s);
  return new Hono<AppEnv>().get("/v1/health", async (c) => {
    const r = await readiness();
    const checks = {
      kv: { ok: r.kv.ok, ms: r.kv.ms },
      rpc: { ok: r.rpc.ok, ms: r.rpc.ms, slot: r.rpc.slot ?? null },
    };
    if (!r.ready) {
      const fields: Record<string, string> = {};
      if (!r.kv.ok) fields.kv = r.kv.problem ?? "unavailable";
      if (!r.rpc.ok) fields.rpc = r.rpc.problem ?? "unavailable";
      throw new ApiError("not_ready", "This instance cannot serve requests right now", fields, {
        "Retry-After": "5",
      });
    }
    return c.json({ status: "ready", checks });
  });
}
