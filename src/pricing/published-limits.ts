/**
 * The limits the API publishes, as one table: each limit's schema (with what the API reference
 * says of it) and where it is published. GET /v1/pricing lists every one a caller plans against,
 * GET /v1/me the three its key is counted by; both responses' OpenAPI schemas and the samples are
 * made from the same lists, so a new published limit is one line here (its check lives with the
 * feature it limits, e.g. src/tokens/tokens-per-day.ts).
 */
import { z } from "zod";
import type { Limits } from "../config.ts";

const count = () => z.number().int();

/** Every published limit's schema, in GET /v1/pricing's order. */
const SCHEMAS = {
  requestsPerHour: count(),
  tokensPerDay: count(),
  metadataPerDay: count(),
  imageBytes: count(),
  imageMaxWidth: count().describe("widest image POST /v1/metadata hosts, in pixels"),
  imageMaxHeight: count().describe("tallest image POST /v1/metadata hosts, in pixels"),
  hostedItemsPerKey: count(),
} satisfies { [K in keyof Limits]?: z.ZodNumber };

type Published = keyof typeof SCHEMAS;

const PRICING = Object.keys(SCHEMAS) as Published[];
/** What GET /v1/me shows beside the key's usage today. */
const KEY = ["tokensPerDay", "metadataPerDay", "requestsPerHour"] as const satisfies Published[];

function pick<K extends Published>(l: Limits, keys: readonly K[]): { [P in K]: number } {
  return Object.fromEntries(keys.map((k) => [k, l[k]])) as { [P in K]: number };
}

function schemaOf<K extends Published>(keys: readonly K[]) {
  return z.object(Object.fromEntries(keys.map((k) => [k, SCHEMAS[k]])) as Pick<typeof SCHEMAS, K>);
}

export const pricingLimits = (l: Limits) => pick(l, PRICING);
export const keyLimits = (l: Limits) => pick(l, KEY);

/** The `limits` of GET /v1/pricing and of GET /v1/me, for the OpenAPI document. */
export const PricingLimits = schemaOf(PRICING);
export const KeyLimits = schemaOf(KEY);
