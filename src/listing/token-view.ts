/**
 * What a key's owner sees of one of its builds, as one zod schema per response: the route shapes
 * its body through it (`buildRecord`, `buildListItem`) and the OpenAPI document is generated from
 * the same object (src/openapi/), so a field added here is served and documented at once.
 * Parsing strips what the record holds beyond the schema and keeps the schema's key order.
 */
import { z } from "zod";
import type { BuildDoc, BuildStatus } from "../../projections/builds.ts";
import { base58, digits } from "../kernel/described.ts";

export const BUILD_STATUSES = [
  "built",
  "submitted",
  "confirmed",
  "failed",
  "unverified",
  "expired",
] as const satisfies readonly BuildStatus[];

/** GET /v1/tokens/{mint}. */
export const BuildRecord = z.object({
  mint: base58("mint address"),
  name: z.string(),
  symbol: z.string(),
  status: z.enum(BUILD_STATUSES),
  signature: z.string().nullable().describe("null until a transaction is seen"),
  feeVerified: z.boolean(),
  createdAt: z.number().int().describe("Unix seconds"),
  confirmedAt: z.number().int().nullable().describe("Unix seconds; null until it lands"),
  tokenProgram: z.literal("token-2022").optional().describe(
    "present for a Token-2022 mint; absent: the classic SPL Token program",
  ),
  transferFee: z.object({
    basisPoints: z.number().int(),
    maximum: digits("largest fee of one transfer in base units"),
    authority: base58("transfer-fee and withdraw authority (the payer)").nullable().describe(
      "null: the fee is permanent",
    ),
  }).optional().describe("the Token-2022 transfer fee, when the mint has one"),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

/** One item of GET /v1/tokens: the build's id, then its record. */
export const BuildListItem = z.object({
  buildId: z.number().int().describe("the build's id"),
}).extend(BuildRecord.shape);
export type BuildListItem = z.infer<typeof BuildListItem>;

export const buildRecord = (b: BuildDoc): BuildRecord => BuildRecord.parse(b);
export const buildListItem = (b: BuildDoc): BuildListItem => BuildListItem.parse(b);
