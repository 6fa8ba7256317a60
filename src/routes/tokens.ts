/**
 * POST /v1/tokens (build an unsigned token-creation transaction), POST /v1/tokens/{mint}/refresh
 * (re-issue it under a fresh blockhash) and GET /v1/tokens/{mint}.
 */
import { Hono } from "hono";
import { ownBuildBy } from "../creation/build-records.ts";
import { readJson } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import { buildToken } from "../tokens/build-token.ts";
import { refreshBuild, type RefreshReaction } from "../tokens/refresh-build.ts";
import { parseBuildRequest } from "../tokens/request-schema.ts";
import { buildRecord } from "../tokens/build-record.ts";
import { currentWellKnownMatcher } from "../admin/well-known-names.ts";
import { checkHostedDocumentMatch } from "../tokens/hosted-match.ts";
import { routeNeeds } from "./needs.ts";
import { mintParam } from "./params.ts";
import { recentCheck } from "../metadata/display-check.ts";
import { hostedMetadataId } from "../metadata/document.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import { outcomeDeliveries } from "../webhooks/outcomes.ts";
import { kvReads, read } from "../commands/read.ts";
import { tokenCurrentProjection } from "../../projections/updates.ts";

export function tokensRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const { apiKey, rateLimit, idempotent } = routeNeeds(s);
  const limit = bodyLimit(DEFAULT_BODY_LIMIT);

  app.post("/v1/tokens", limit, apiKey, rateLimit, idempotent, async (c) => {
    // The configured list, or an operator's edit of it (admin); one KV read, folded once per edit.
    // Hosted documents are at HOSTED_BASE_URL when set; older ones stay at PUBLIC_BASE_URL.
    const { publicBaseUrl, hostedBaseUrl } = s.config;
    // The list first, so the parsed body is checked as soon as it exists (src/routes/metadata.ts).
    const wellKnown = await currentWellKnownMatcher(s);
    const req = parseBuildRequest(await readJson(c), wellKnown, hostedBaseUrl ?? publicBaseUrl);
    await checkHostedDocumentMatch(s.kv, [publicBaseUrl, hostedBaseUrl ?? publicBaseUrl], req);
    // An external document: what a display check in the last minutes found (never a fetch
    // here), read before the build so its commit stays the build's last KV step. Advisory, so not
    // part of the stored answer an Idempotency-Key replays.
    const own = [publicBaseUrl, hostedBaseUrl].some((b) =>
      b && hostedMetadataId(b, req.metadataUri)
    );
    const displayCheck = own ? null : await recentCheck(s.kv, req.metadataUri, s.clock());
    const key = c.get("key");
    const body = await buildToken(s, key, req, {
      idempotency: c.get("idempotency"),
    });
    return c.json(displayCheck ? { ...body, displayCheck } : body, 201);
  });

  app.post("/v1/tokens/:mint/refresh", limit, apiKey, rateLimit, idempotent, async (c) => {
    const mint = mintParam(c.req.param("mint"));
    const key = c.get("key");
    // The refresh's token.refreshed deliveries, in its commit.
    const react: RefreshReaction = (tx, build, events) => outcomeDeliveries(s, tx, build, events);
    return c.json(await refreshBuild(s, key, mint, react, c.get("idempotency")), 200);
  });

  app.get("/v1/tokens/:mint", apiKey, rateLimit, async (c) => {
    const mint = mintParam(c.req.param("mint"));
    // Another key's mint answers exactly like an unknown one, so keys can't probe each other.
    const build = await ownBuildBy(s.kv, c.get("key").keyId, "build_by_mint", mint);
    if (!build) {
      throw new ApiError("not_found", "No token built by this key has that mint", {});
    }
    // After a landed update, what the token is now (projections/updates.ts).
    const current = await read(kvReads(s.kv), tokenCurrentProjection, [build.buildId]);
    return c.json(buildRecord(current ? { ...build, current } : build));
  });

  return app;
}
