/**
 * What a key's owner sees of one of its builds, as one zod schema per response: the route shapes
 * its body through it (`buildRecord`, `buildListItem`) and the OpenAPI document is generated from
 * the same object (src/openapi/). Its build fields are picked from the event's schema
 * (events/token-built.ts), so a field served there is served and documented at once.
 * Parsing strips what the record holds beyond the schema and keeps the schema's key order.
 */
import { z } from "zod";
import type { BuildDoc, BuildStatus } from "../../projections/builds.ts";
import { SERVED, TokenBuiltData } from "../../events/token-built.ts";
import { TokenView } from "../../events/token-update.ts";

/** `["a", "b"]` as zod's `pick` mask `{ a: true, b: true }`. */
const fieldSet = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, true])) as { [P in K]: true };

export const BUILD_STATUSES = [
  "built",
  "submitted",
  "confirmed",
  "failed",
  "unverified",
  "expired",
] as const satisfies readonly BuildStatus[];

/** GET /v1/tokens/{mint}: what the event's `SERVED` fields are, around the lifecycle. */
export const BuildRecord = z.object({
  ...TokenBuiltData.pick(fieldSet(SERVED.head)).shape,
  status: z.enum(BUILD_STATUSES),
  signature: z.string().nullable().describe("null until a transaction is seen"),
  feeVerified: z.boolean(),
  createdAt: z.number().int().describe("Unix seconds"),
  confirmedAt: z.number().int().nullable().describe("Unix seconds; null until it lands"),
  current: TokenView.extend({
    updates: z.number().int().describe("how many updates have landed"),
    lastUpdateId: z.string().describe("the last landed update's id"),
    updatedAt: z.number().int().describe("Unix seconds"),
  }).optional().describe(
    "present once an update (POST /v1/tokens/{mint}/update) has landed: the token's current " +
      "name, symbol, uri and authorities as the last landed update set them",
  ),
  ...TokenBuiltData.pick(fieldSet(SERVED.tail)).shape,
});
export type BuildRecord = z.infer<typeof BuildRecord>;

/** One item of GET /v1/tokens: the build's id, then its record. */
export const BuildListItem = z.object({
  buildId: z.number().int().describe("the build's id"),
}).extend(BuildRecord.shape);
export type BuildListItem = z.infer<typeof BuildListItem>;

export const buildRecord = (b: BuildDoc & { current?: BuildRecord["current"] }): BuildRecord =>
  BuildRecord.parse(b);
export const buildListItem = (b: BuildDoc): BuildListItem => BuildListItem.parse(b);
