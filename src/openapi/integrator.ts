/**
 * The integrator-facing operations (health, the build list, webhooks) and their response schemas,
 * kept apart from document.ts so they can grow without touching the seed's operations. The
 * document's own helpers are handed in, so nothing here imports document.ts back.
 */
import { z } from "zod";
import { BUILD_STATUSES } from "../listing/list-builds.ts";
import { BuildRecord } from "./schemas.ts";

type Json = Record<string, unknown>;

export interface DocHelpers {
  ok: (description: string, schema: string, keyed?: boolean, extra?: Json) => Json;
  r: (name: string) => Json;
  keyedErrors: Json;
  pathParam: (name: string, description: string) => Json;
  body: (schema: string, description: string, example?: unknown) => Json;
}

const check = z.object({
  ok: z.boolean(),
  ms: z.number().int().describe("how long the probe took, in milliseconds"),
});

export const Health = z.object({
  status: z.literal("ready"),
  checks: z.object({
    kv: check.describe("a read of Deno KV"),
    rpc: check.extend({
      slot: z.number().int().nullable().describe("the RPC's confirmed slot"),
    }).describe("a getSlot call to the Solana RPC, reused for 5 s"),
  }),
});

export const BuildList = z.object({
  items: z.array(BuildRecord.extend({ buildId: z.number().int().describe("the build's id") }))
    .describe("newest first"),
  nextCursor: z.string().nullable().describe(
    "pass as cursor for the next page; null when there is nothing more",
  ),
});

export const integratorSchemas = (jsonSchema: (s: z.ZodType) => Json): Record<string, Json> => ({
  Health: jsonSchema(Health),
  BuildList: jsonSchema(BuildList),
});

export function integratorPaths(h: DocHelpers): Record<string, Json> {
  return {
    "/v1/tokens": {
      get: {
        operationId: "listBuilds",
        tags: ["Tokens"],
        summary: "The calling key's builds, newest first",
        description:
          "Served from a per-key index, never from a scan of the log. Pages are cut by an opaque " +
          "cursor that stays a stable position while new builds arrive: following nextCursor " +
          "until it is null lists every build that existed when the first page was read exactly " +
          "once (newer ones appear on a fresh first page). With a status filter a page looks at " +
          "most 500 builds, so it may hold fewer than limit items while nextCursor is not null. " +
          "400 invalid_request names each bad parameter (status, limit, cursor).",
        parameters: [
          {
            name: "status",
            in: "query",
            required: false,
            description: "only builds in this state",
            schema: { type: "string", enum: [...BUILD_STATUSES] },
          },
          {
            name: "limit",
            in: "query",
            required: false,
            description: "items per page, 1 to 100",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            description: "nextCursor of the previous page",
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": h.ok("A page of build records", "BuildList"),
          "400": h.r("BadRequest"),
          ...h.keyedErrors,
        },
      },
    },
    "/v1/health": {
      get: {
        operationId: "getHealth",
        tags: ["Meta"],
        summary: "Readiness of this instance (KV and RPC), for load balancers",
        description:
          "Needs no key and is not rate limited. 200 when Deno KV answers a read and the Solana " +
          "RPC answers getSlot within 2 s (the RPC answer is reused for 5 s, so polling costs " +
          "at most one RPC call per 5 s per instance); otherwise 503 not_ready with " +
          "fields.kv / fields.rpc saying what failed.",
        security: [],
        responses: {
          "200": h.ok("Ready", "Health", false),
          "503": h.r("NotReady"),
        },
      },
    },
  };
}

export const integratorResponses = (
  json: (schema: string, extra?: Json) => Json,
  headerRef: (name: string) => Json,
): Record<string, Json> => ({
  NotReady: {
    description:
      "not_ready: KV or the Solana RPC did not answer; the instance should get no traffic",
    headers: {
      "X-Request-Id": headerRef("X-Request-Id"),
      "Retry-After": headerRef("Retry-After"),
    },
    content: json("Error", {
      examples: {
        not_ready: {
          value: {
            error: {
              code: "not_ready",
              message: "This instance cannot serve requests right now",
              fields: { rpc: "RPC: no answer within 2000 ms" },
            },
          },
        },
      },
    }),
  },
});
