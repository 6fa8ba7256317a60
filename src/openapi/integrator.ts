/**
 * The integrator-facing operations (health, the build list, webhooks) and their response schemas,
 * kept apart from document.ts so they can grow without touching the seed's operations. The
 * document's own helpers are handed in, so nothing here imports document.ts back.
 */
import { z } from "zod";
import { PROBE_TIMEOUT_MS, RPC_CHECK_TTL_MS } from "../health/readiness.ts";
import { ListQuery, MAX_SCANNED } from "../listing/list-builds.ts";
import { BuildListItem } from "../tokens/build-record.ts";
import { RegisterRequest } from "../webhooks/endpoints.ts";
import {
  ATTEMPT_TIMEOUT_MS,
  DISABLE_AFTER_MS,
  MAX_ATTEMPTS,
  MAX_ENDPOINTS_PER_KEY,
  RETRY_DELAYS_MS,
  WEBHOOK_EVENT_TYPES,
} from "../webhooks/decide.ts";

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
    }).describe(`a getSlot call to the Solana RPC, reused for ${RPC_CHECK_TTL_MS / 1000} s`),
  }),
});

export const BuildList = z.object({
  items: z.array(BuildListItem)
    .describe("newest first"),
  nextCursor: z.string().nullable().describe(
    "pass as cursor for the next page; null when there is nothing more",
  ),
});

const eventType = z.enum(WEBHOOK_EVENT_TYPES);
const isoTime = (what: string) => z.string().describe(`${what} (ISO 8601, UTC)`);

export const WebhookEndpoint = z.object({
  id: z.string().describe("endpoint id (we_...)"),
  url: z.string(),
  events: z.array(eventType),
  description: z.string().nullable(),
  status: z.enum(["enabled", "disabled"]).describe(
    `disabled after every attempt failed for ${DISABLE_AFTER_MS / 86_400_000} days; register ` +
      "the endpoint again to resume",
  ),
  failingSince: isoTime("first failed attempt since the last success").nullable(),
  createdAt: isoTime("registration time"),
  disabledAt: isoTime("when it was disabled").nullable(),
});

export const WebhookEndpointCreated = WebhookEndpoint.extend({
  secret: z.string().describe(
    "whsec_ signing secret (Standard Webhooks); shown this once only, keep it safe",
  ),
});

export const WebhookEndpointList = z.object({ items: z.array(WebhookEndpoint) });

export const WebhookDelivery = z.object({
  id: z.string().describe("delivery id (dlv_...)"),
  messageId: z.string().describe("the webhook-id header; the same for a replay"),
  type: eventType,
  buildId: z.number().int(),
  status: z.enum(["pending", "delivered", "failed"]),
  replayOf: z.string().nullable().describe("the delivery this one replays"),
  createdAt: isoTime("when it was scheduled"),
  nextAttemptAt: isoTime("when the next attempt is due").nullable(),
  failureReason: z.string().nullable().describe("why it was given up"),
  attempts: z.array(z.object({
    attempt: z.number().int(),
    at: isoTime("when it was made"),
    ok: z.boolean(),
    httpStatus: z.number().int().nullable().describe("the receiver's status, null if none"),
    error: z.string().nullable(),
    durationMs: z.number().int(),
  })),
  payload: z.object({
    type: eventType,
    timestamp: isoTime("when the outcome was recorded"),
    data: z.record(z.string(), z.unknown()).describe(
      "buildId, mint, status, signature, name, symbol, payer, recipient, supplyRaw, " +
        "supplyRawSeen, slot, confirmedAt, problems, fee {lamports, lamportsSeen, verified, " +
        "treasury}, refreshes; token.refreshed adds refresh {blockhash, lastValidBlockHeight, " +
        "feeQuote}",
    ),
  }).describe("the exact body that was signed and sent"),
});

export const WebhookDeliveryList = z.object({
  items: z.array(WebhookDelivery).describe("newest first"),
  nextCursor: z.string().nullable(),
});

export const integratorSchemas = (
  jsonSchema: (s: z.ZodType) => Json,
  inputSchema: (s: z.ZodType) => Json,
): Record<string, Json> => ({
  WebhookRegistration: inputSchema(RegisterRequest),
  Health: jsonSchema(Health),
  BuildList: jsonSchema(BuildList),
  WebhookEndpoint: jsonSchema(WebhookEndpoint),
  WebhookEndpointCreated: jsonSchema(WebhookEndpointCreated),
  WebhookEndpointList: jsonSchema(WebhookEndpointList),
  WebhookDelivery: jsonSchema(WebhookDelivery),
  WebhookDeliveryList: jsonSchema(WebhookDeliveryList),
});

/** The build list's query parameters, each with the JSON Schema of the member GET /v1/tokens parses. */
const listQuery = z.toJSONSchema(ListQuery, { io: "input", unrepresentable: "any" }) as {
  properties: Record<string, Json & { minimum?: number; maximum?: number }>;
};
const queryParam = (name: string, description: string) => ({
  name,
  in: "query",
  required: false,
  description,
  schema: listQuery.properties[name],
});

/** limit and cursor, as every paged list takes them. */
const PAGE_PARAMS = [
  queryParam(
    "limit",
    `items per page, ${listQuery.properties.limit.minimum} to ${listQuery.properties.limit.maximum}`,
  ),
  queryParam("cursor", "nextCursor of the previous page"),
];

/** 5000 -> "5 s", 300000 -> "5 min", 7200000 -> "2 h", 99000000 -> "27.5 h". */
function duration(ms: number): string {
  if (ms < 60_000) return `${ms / 1000} s`;
  if (ms < 3_600_000) return `${ms / 60_000} min`;
  return `${ms / 3_600_000} h`;
}

/** 99305000 -> "27 h 35 min". */
function hoursAndMinutes(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const retries = RETRY_DELAYS_MS.map(duration);

const WEBHOOKS_TEXT =
  "Each build of the calling key sends one event per final outcome: token.confirmed, " +
  "token.unverified, token.failed, token.expired; token.refreshed each time POST " +
  "/v1/tokens/{mint}/refresh re-issues it (an expired build is then open again); and for each " +
  "token update one per outcome: token.updated (landed and read back), token.update_failed " +
  "(landed with an error, or relayed and expired before it landed). All seven " +
  "unless `events` narrows them. " +
  "Requests follow Standard Webhooks: a JSON body {type, timestamp, data} signed with the " +
  "whsec_ secret returned here once, in the webhook-id, webhook-timestamp and webhook-signature " +
  "headers; verify them with any Standard Webhooks library. Delivery is at least once: an " +
  `attempt succeeds on a 2xx within ${duration(ATTEMPT_TIMEOUT_MS)}; otherwise it is retried ` +
  `after ${retries.slice(0, -1).join(", ")} and ${retries.at(-1)} (${MAX_ATTEMPTS} attempts over ` +
  `${
    hoursAndMinutes(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0))
  }). Redirects are not followed. The ` +
  "URL must be https on a public address (checked again on every attempt, and the connection " +
  "goes to the checked address). An endpoint whose every attempt failed for " +
  `${DISABLE_AFTER_MS / 86_400_000} days is disabled. At most ${MAX_ENDPOINTS_PER_KEY} ` +
  "endpoints per key.";

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
          `most ${MAX_SCANNED} builds, so it may hold fewer than limit items while nextCursor is ` +
          "not null. " +
          "400 invalid_request names each bad parameter (status, limit, cursor).",
        parameters: [
          queryParam("status", "only builds in this state"),
          ...PAGE_PARAMS,
        ],
        responses: {
          "200": h.ok("A page of build records", "BuildList"),
          "400": h.r("BadRequest"),
          ...h.keyedErrors,
        },
      },
    },
    "/v1/webhooks": {
      post: {
        operationId: "registerWebhook",
        tags: ["Webhooks"],
        summary: "Register a webhook endpoint",
        description: WEBHOOKS_TEXT,
        requestBody: h.body("WebhookRegistration", "Where to send, and which events", {
          url: "https://example.com/hooks/tokens",
          events: ["token.confirmed", "token.unverified"],
          description: "production receiver",
        }),
        responses: {
          "201": h.ok("Registered; the secret is in this answer only", "WebhookEndpointCreated"),
          "400": h.r("BadRequest"),
          ...h.keyedErrors,
        },
      },
      get: {
        operationId: "listWebhooks",
        tags: ["Webhooks"],
        summary: "The calling key's webhook endpoints",
        responses: { "200": h.ok("The endpoints", "WebhookEndpointList"), ...h.keyedErrors },
      },
    },
    "/v1/webhooks/{id}": {
      get: {
        operationId: "getWebhook",
        tags: ["Webhooks"],
        summary: "One endpoint (another key's answers 404)",
        parameters: [h.pathParam("id", "endpoint id")],
        responses: {
          "200": h.ok("The endpoint", "WebhookEndpoint"),
          "404": h.r("NotFound"),
          ...h.keyedErrors,
        },
      },
      delete: {
        operationId: "deleteWebhook",
        tags: ["Webhooks"],
        summary: "Delete an endpoint; deliveries still pending for it are given up",
        parameters: [h.pathParam("id", "endpoint id")],
        responses: {
          "204": { description: "Deleted" },
          "404": h.r("NotFound"),
          ...h.keyedErrors,
        },
      },
    },
    "/v1/webhooks/{id}/deliveries": {
      get: {
        operationId: "listWebhookDeliveries",
        tags: ["Webhooks"],
        summary: "An endpoint's deliveries with every attempt, newest first",
        parameters: [
          h.pathParam("id", "endpoint id"),
          ...PAGE_PARAMS,
        ],
        responses: {
          "200": h.ok("A page of deliveries", "WebhookDeliveryList"),
          "400": h.r("BadRequest"),
          "404": h.r("NotFound"),
          ...h.keyedErrors,
        },
      },
    },
    "/v1/webhooks/{id}/deliveries/{deliveryId}/replay": {
      post: {
        operationId: "replayWebhookDelivery",
        tags: ["Webhooks"],
        summary: "Send a delivery's message again",
        description:
          "Schedules a new delivery with the same webhook-id and body (a receiver that " +
          "deduplicates by webhook-id sees the same message), attempted at once and retried on " +
          "the usual schedule. 400 with fields.endpoint when the endpoint is disabled.",
        parameters: [h.pathParam("id", "endpoint id"), h.pathParam("deliveryId", "delivery id")],
        responses: {
          "202": h.ok("The new delivery", "WebhookDelivery"),
          "400": h.r("BadRequest"),
          "404": h.r("NotFound"),
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
          `RPC answers getSlot within ${duration(PROBE_TIMEOUT_MS)} (the RPC answer is reused ` +
          `for ${duration(RPC_CHECK_TTL_MS)}, so polling costs at most one RPC call per ` +
          `${duration(RPC_CHECK_TTL_MS)} per instance); otherwise 503 not_ready with ` +
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
              fields: { rpc: `RPC: no answer within ${PROBE_TIMEOUT_MS} ms` },
            },
          },
        },
      },
    }),
  },
});
