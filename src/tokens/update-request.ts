/**
 * POST /v1/tokens/{mint}/update body: a strict schema (the build's own field rules for addresses,
 * name, symbol and metadataUri, request-schema.ts), then the rules across fields: at least one
 * change, a name or symbol only with a new metadataUri, and immutability not combined with a new
 * update authority (immutable metadata has none to hand over on Token-2022). Every bad field is
 * named at once.
 */
import { z } from "zod";
import { ApiError } from "../kernel/errors.ts";
import { firstPass } from "../kernel/zod-fields.ts";
import { address, metadataUriField, name, payerAddress, symbol } from "./request-schema.ts";
import { type WellKnownMatcher, wellKnownMessage } from "./well-known-names.ts";

export interface UpdateRequest {
  /** The current authority of every change asked: the one signer and fee payer. */
  authority: string;
  metadataUri: string | null;
  /** Given with a metadataUri; a hosted document's are taken when absent (update-decide.ts). */
  name: string | null;
  symbol: string | null;
  updateAuthority: string | null;
  /** true: make the metadata immutable. */
  makeImmutable: boolean;
  /** undefined: unchanged; null: revoked; an address: handed over. */
  mintAuthority: string | null | undefined;
  freezeAuthority: string | null | undefined;
}

/** The fields that ask for a change (one at least). */
export const CHANGE_FIELDS = [
  "metadataUri",
  "updateAuthority",
  "isMutable",
  "mintAuthority",
  "freezeAuthority",
] as const;

const updateRequestSchema = (publicBaseUrl: string | null) =>
  z.strictObject({
    authority: payerAddress.describe(
      "the token's current authority for every change asked (base58): the one signer and fee payer",
    ),
    metadataUri: metadataUriField(publicBaseUrl).optional().describe(
      "new metadata document; a hosted one gives the name and symbol",
    ),
    name: name.optional().describe(
      "with metadataUri: the new name (a hosted document's otherwise)",
    ),
    symbol: symbol.optional().describe(
      "with metadataUri: the new symbol (a hosted document's otherwise)",
    ),
    updateAuthority: address.optional().describe(
      "hand the metadata update authority over (base58)",
    ),
    isMutable: z.literal(false, { error: "must be false (metadata can only be made immutable)" })
      .optional().describe("false: make the metadata immutable, for good"),
    mintAuthority: address.nullable().optional().describe(
      "hand the mint authority over (base58), or null to revoke it",
    ),
    freezeAuthority: address.nullable().optional().describe(
      "hand the freeze authority over (base58), or null to revoke it",
    ),
  });

/** The body's shape as the contract states it; the OpenAPI document uses it. */
export const UpdateRequestSchema = updateRequestSchema(null);

const pass = firstPass(updateRequestSchema);

/** Throws 400 invalid_request naming every bad field, or returns the update request. */
export function parseUpdateRequest(
  raw: unknown,
  wellKnown: WellKnownMatcher,
  publicBaseUrl: string | null = null,
): UpdateRequest {
  const { parsed, fields, body } = pass(raw, publicBaseUrl);
  Object.assign(fields, crossFieldProblems(body, fields));
  for (const f of ["name", "symbol"] as const) {
    if (typeof body[f] !== "string" || f in fields) continue;
    const hit = wellKnown.match(body[f] as string);
    if (hit) fields[f] = wellKnownMessage(hit);
  }
  if (!parsed.success || Object.keys(fields).length > 0) {
    throw new ApiError("invalid_request", "Request is invalid", fields);
  }
  const d = parsed.data;
  return {
    authority: d.authority,
    metadataUri: d.metadataUri ?? null,
    name: d.name ?? null,
    symbol: d.symbol ?? null,
    updateAuthority: d.updateAuthority ?? null,
    makeImmutable: d.isMutable === false,
    mintAuthority: d.mintAuthority,
    freezeAuthority: d.freezeAuthority,
  };
}

/** The rules across fields, each naming the fields it concerns. */
export function crossFieldProblems(
  body: Record<string, unknown>,
  fields: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  if ("body" in fields) return out;
  if (!CHANGE_FIELDS.some((f) => body[f] !== undefined)) {
    out.body = `nothing to change: send at least one of ${CHANGE_FIELDS.join(", ")}`;
  }
  for (const f of ["name", "symbol"] as const) {
    if (body[f] !== undefined && body.metadataUri === undefined) {
      out[f] = "a new name or symbol comes with a new metadataUri (the document it describes)";
    }
  }
  if (body.isMutable === false && body.updateAuthority !== undefined) {
    out.isMutable = "conflicts with updateAuthority: immutable metadata has no update authority";
    out.updateAuthority = "conflicts with isMutable: send one of them";
  }
  return out;
}
