/**
 * The integrator-facing operations (health, the build list, webhooks) and their response schemas,
 * kept apart from document.ts so they can grow without touching the seed's operations. The
 * document's own helpers are handed in, so nothing here imports document.ts back.
 */
import { z } from "zod";

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

export const integratorSchemas = (jsonSchema: (s: z.ZodType) => Json): Record<string, Json> => ({
  Health: jsonSchema(Health),
});

export function integratorPaths(h: DocHelpers): Record<string, Json> {
  return {
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
