/**
 * The operator surface under /admin, behind ADMIN_TOKEN. Without ADMIN_TOKEN it does not exist:
 * every /admin path answers 404 like any unknown endpoint, so a deployment that never set a token
 * shows no sign of it.
 *
 *   GET    /admin/keys[?status=&wallet=&limit=&cursor=]   keys (no secrets or hashes)
 *   GET    /admin/keys/:keyId
 *   POST   /admin/keys/:keyId/ban   {reason}              ban (401 from then on)
 *   POST   /admin/keys/:keyId/lift                        lift a ban or a suspension
 *   GET    /admin/purchases[?wallet=&limit=&cursor=]
 *   GET    /admin/well-known-names                        the list in force and where it comes from
 *   PUT    /admin/well-known-names  {names}               replace
 *   PATCH  /admin/well-known-names  {add?, remove?}       edit
 *   DELETE /admin/well-known-names                        back to the configured list
 */
import { Hono } from "hono";
import { z } from "zod";
import { adminToken } from "../http/admin-token.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import { isKeyId } from "../keys/api-key.ts";
import type { ListOptions } from "../admin/keys.ts";
import { handleAdmin } from "../admin/handle.ts";
import { getKey, listKeys, listPurchases } from "../admin/reads.ts";
import {
  editWellKnownNames,
  NamesError,
  readWellKnownNames,
  resetWellKnownNames,
  setWellKnownNames,
} from "../admin/well-known-names.ts";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import { actionsChannel } from "../actions/channel.ts";
import { listEndpoints, registerEndpoint, RegisterRequest } from "../webhooks/endpoints.ts";

const BanBody = z.strictObject({
  reason: z.string({ error: (i) => (i.input === undefined ? "required" : "must be a string") })
    .trim().min(1, "required").max(500, "at most 500 characters"),
});
const NamesBody = z.strictObject({ names: z.array(z.unknown(), { error: "must be an array" }) });
const EditBody = z.strictObject({
  add: z.array(z.unknown(), { error: "must be an array" }).optional(),
  remove: z.array(z.unknown(), { error: "must be an array" }).optional(),
});
const ListQuery = z.strictObject({
  limit: z.coerce.number({ error: "must be an integer from 1 to 500" }).int().min(1).max(500)
    .optional(),
  cursor: z.string().max(2000).optional(),
  wallet: z.string().max(64).optional(),
  status: z.enum(["active", "deleted", "banned", "suspended"]).optional(),
});

export function adminRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const token = s.config.adminToken;
  if (!token) return app;

  app.use("/admin/*", async function adminHeaders(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  });
  // The whole surface is behind the token, unknown /admin paths included: 401, then 404.
  app.use("/admin/*", bodyLimit(DEFAULT_BODY_LIMIT), adminToken(token));

  const query = (c: { req: { query(): Record<string, string> } }): ListOptions => {
    const r = ListQuery.safeParse(c.req.query());
    if (!r.success) {
      const fields: Record<string, string> = {};
      for (const i of r.error.issues) {
        if (i.code === "unrecognized_keys") {
          for (const k of i.keys) fields[k] = "unknown parameter";
        } else fields[i.path.join(".")] ??= i.message;
      }
      throw new ApiError("invalid_request", "Query is invalid", fields);
    }
    return r.data;
  };
  const badCursor = (e: unknown): never => {
    if (e instanceof TypeError || (e as Error)?.name === "TypeError") {
      throw new ApiError("invalid_request", "Query is invalid", { cursor: "not a cursor we gave" });
    }
    throw e;
  };
  const keyIdOf = (raw: string) => {
    if (!isKeyId(raw)) throw new ApiError("not_found", "No such key");
    return raw;
  };
  const audit = (action: string, fields: Record<string, unknown>) =>
    s.logger.log("info", `admin: ${action}`, fields);

  // The Solana Action's builds belong to the Actions channel's key, which has no secret to call
  // /v1/webhooks with: its endpoints are the operator's, registered and listed here.
  app.post("/admin/actions/webhooks", async (c) => {
    const body = await readBody(c, RegisterRequest);
    audit("actions webhook registered", { url: body.url });
    return c.json(await registerEndpoint(s, await actionsChannel(s), body), 201);
  });
  app.get(
    "/admin/actions/webhooks",
    async (c) => c.json({ items: await listEndpoints(s, await actionsChannel(s)) }),
  );

  app.get("/admin/keys", async (c) => c.json(await listKeys(s.kv, query(c)).catch(badCursor)));
  app.get("/admin/keys/:keyId", async (c) => {
    const key = await getKey(s.kv, keyIdOf(c.req.param("keyId")));
    if (!key) throw new ApiError("not_found", "No such key");
    return c.json(key);
  });
  app.post("/admin/keys/:keyId/ban", async (c) => {
    const keyId = keyIdOf(c.req.param("keyId"));
    const { reason } = await readBody(c, BanBody);
    const { key, changed } = await handleAdmin(s.store, { type: "BanKey", keyId, reason }, s.clock);
    audit("key banned", { keyId, reason, changed });
    return c.json({ key, changed });
  });
  app.post("/admin/keys/:keyId/lift", async (c) => {
    const keyId = keyIdOf(c.req.param("keyId"));
    const { key, changed } = await handleAdmin(s.store, { type: "LiftBan", keyId }, s.clock);
    audit("ban lifted", { keyId, changed });
    return c.json({ key, changed });
  });
  app.get("/admin/purchases", async (c) => {
    const { status: _ignored, ...opts } = query(c);
    return c.json(await listPurchases(s.kv, opts).catch(badCursor));
  });

  const names = async (fn: () => Promise<unknown>) => {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof NamesError) {
        throw new ApiError("invalid_request", "Request is invalid", e.problems);
      }
      throw e;
    }
  };
  const namesCtx = { kv: s.kv, config: s.config, clock: s.clock };
  app.get("/admin/well-known-names", async (c) => c.json(await readWellKnownNames(namesCtx)));
  app.put("/admin/well-known-names", async (c) => {
    const body = await readBody(c, NamesBody);
    const out = await names(() => setWellKnownNames(namesCtx, body.names));
    audit("well-known names replaced", { count: body.names.length });
    return c.json(out);
  });
  app.patch("/admin/well-known-names", async (c) => {
    const body = await readBody(c, EditBody);
    const out = await names(() => editWellKnownNames(namesCtx, body));
    audit("well-known names edited", { add: body.add ?? [], remove: body.remove ?? [] });
    return c.json(out);
  });
  app.delete("/admin/well-known-names", async (c) => {
    const out = await resetWellKnownNames(namesCtx);
    audit("well-known names reset to configuration", {});
    return c.json(out);
  });
  return app;
}
