/**
 * POST /v1/metadata: parse, host, answer 201 with the public URLs. POST /v1/metadata/check: what
 * wallets and explorers will show for a metadata URI (src/metadata/display-check.ts).
 */
import { Hono } from "hono";
import { readBody, readJson } from "../http/body.ts";
import { checkDisplay } from "../metadata/display-check.ts";
import { DisplayCheckRequest } from "../metadata/display-check-schema.ts";
import type { AppEnv } from "../http/env.ts";
import { hostMetadata } from "../metadata/handle.ts";
import { parseMetadataRequest } from "../metadata/request.ts";
import type { Services } from "../services.ts";
import { currentWellKnownMatcher } from "../admin/well-known-names.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT, METADATA_BODY_LIMIT } from "../http/body-limit.ts";
import { routeNeeds } from "./needs.ts";

export function metadataRoutes(s: Services) {
  const { apiKey, rateLimit, idempotent } = routeNeeds(s);
  // The one body larger than 64 KiB: the image may come inline (design.md).
  const limit = bodyLimit(METADATA_BODY_LIMIT);
  return new Hono<AppEnv>().post(
    "/v1/metadata",
    limit,
    apiKey,
    rateLimit,
    idempotent,
    async (c) => {
      // The list first: a parsed body (a 2 MiB one can be 10 MB of objects) is checked as soon as
      // it exists, never held across a read while 31 others wait beside it.
      const wellKnown = await currentWellKnownMatcher(s);
      const body = parseMetadataRequest(await readJson(c), wellKnown);
      const hosted = await hostMetadata(s, {
        key: c.get("key"),
        idempotency: c.get("idempotency"),
        requestId: c.get("requestId"),
        body,
      });
      return c.json(hosted, 201);
    },
  ).post(
    "/v1/metadata/check",
    bodyLimit(DEFAULT_BODY_LIMIT),
    apiKey,
    rateLimit,
    async (c) => c.json(await checkDisplay(s, await readBody(c, DisplayCheckRequest)), 200),
  );
}
