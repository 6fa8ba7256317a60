/**
 * The token-update operations (POST /v1/tokens/{mint}/update, GET
 * /v1/tokens/{mint}/updates/{updateId}) and their schemas, made from the zod schemas the handlers
 * parse and answer with, kept apart from document.ts as integrator.ts is. The document's helpers
 * are handed in, so nothing here imports document.ts back.
 */
import type { z } from "zod";
import type { Config } from "../config.ts";
import { updateFeeText } from "../pricing/update-fee.ts";
import { UpdateRequestSchema } from "../tokens/update-request.ts";
import { TokenUpdateBuilt, TokenUpdateRecord } from "../tokens/update-response.ts";
import type { DocHelpers } from "./integrator.ts";

type Json = Record<string, unknown>;

export const updateSchemas = (
  output: (s: z.ZodType) => Json,
  input: (s: z.ZodType) => Json,
): Record<string, Json> => ({
  TokenUpdateRequest: {
    ...input(UpdateRequestSchema),
    description: "At least one of metadataUri, updateAuthority, isMutable, mintAuthority, " +
      "freezeAuthority; name and symbol only with metadataUri; isMutable not with " +
      "updateAuthority. Unknown members are refused.",
    anyOf: ["metadataUri", "updateAuthority", "isMutable", "mintAuthority", "freezeAuthority"]
      .map((f) => ({ required: [f] })),
    dependentRequired: { name: ["metadataUri"], symbol: ["metadataUri"] },
    dependentSchemas: { isMutable: { not: { required: ["updateAuthority"] } } },
  },
  TokenUpdateBuilt: output(TokenUpdateBuilt),
  TokenUpdateRecord: output(TokenUpdateRecord),
});

export function updatePaths(
  h: DocHelpers & { idempotencyKey: Json; postErrors: Json },
  fees: Config["fees"],
): Record<string, Json> {
  return {
    "/v1/tokens/{mint}/update": {
      post: {
        operationId: "buildTokenUpdate",
        tags: ["Tokens"],
        summary: "Build an unsigned transaction updating a token's metadata or authorities",
        description:
          "For a token the calling key created (another key's mint answers 404 like an unknown " +
          "one). One unsigned legacy transaction for the token's current authority, named " +
          "`authority`: the one signer and fee payer. Any of: a new metadataUri (a document we " +
          "host gives the name and symbol, as for a build; an external one keeps the token's " +
          "unless name/symbol are sent), a new update authority, the metadata made immutable " +
          "(isMutable: false, for good), the mint or freeze authority handed to an address or " +
          "revoked (null). Classic mints: Metaplex UpdateMetadataAccountV2 and SetAuthority. " +
          "Token-2022: UpdateField per changed field, UpdateAuthority (with the metadata " +
          "pointer's authority), SetAuthority; a longer field grows the mint, and since the " +
          "program does not fund that, a transfer to the mint tops its rent up first " +
          "(costs.rentTopUpLamports). Then " + updateFeeText.inUpdate(fees) + ".\n\n" +
          "Decided against the chain's current state, read in one round trip: immutable " +
          "metadata, an authority already revoked, or an `authority` that does not hold every " +
          "authority the changes need is 400 invalid_request naming the field and why, before " +
          "anything is built; so is an address an authority goes to that is neither a wallet " +
          "(on-curve) nor an existing account (a typo must not give a token away). `costs` is " +
          "every lamport the authority spends if it lands. Not counted against the daily " +
          "build limit. Sign and send within about 60 seconds, through the relay (POST " +
          "/v1/transactions, which records the landing) or your own RPC, then read it back " +
          "with GET /v1/tokens/{mint}/updates/{updateId}?signature=.",
        parameters: [pathParam(h, "mint"), h.idempotencyKey],
        requestBody: h.body("TokenUpdateRequest", "What to change, and who signs"),
        responses: {
          "201": h.ok(
            "The unsigned update transaction, and the token before and after",
            "TokenUpdateBuilt",
          ),
          ...h.postErrors,
          "404": h.r("NotFound"),
          "503": h.r("PriceUnavailable"),
        },
      },
    },
    "/v1/tokens/{mint}/updates/{updateId}": {
      get: {
        operationId: "getTokenUpdate",
        tags: ["Tokens"],
        summary: "An update's record; with a signature, verify it landed",
        description:
          "With `signature`: the confirmed transaction is read back; it is the update's when " +
          "the update's authority signed it and its message is the one issued (the two " +
          "compute-budget values aside, which a wallet may raise). Its outcome is recorded " +
          "once: landed (the token's record then shows it under `current`; webhook " +
          "token.updated) or failed (landed with an error, or relayed and expired unseen; " +
          "token.update_failed). A signature " +
          "not yet confirmed leaves the record as it is; one that is not this update's is 400 " +
          "naming signature. Without one, the record as it stands, without an RPC call: an " +
          "update sent through the relay (POST /v1/transactions; status submitted) has its " +
          "outcome recorded by the relay's follow-up, so polling this is enough.",
        parameters: [
          pathParam(h, "mint"),
          h.pathParam("updateId", "the update's id, from its 201"),
          {
            name: "signature",
            in: "query",
            required: false,
            description: "the signature of the signed update transaction",
            schema: { type: "string", pattern: "^[1-9A-HJ-NP-Za-km-z]{64,88}$" },
          },
        ],
        responses: {
          "200": h.ok("The update's record", "TokenUpdateRecord"),
          "400": h.r("BadRequest"),
          "404": h.r("NotFound"),
          ...h.keyedErrors,
        },
      },
    },
  };
}

const pathParam = (h: DocHelpers, name: string) => h.pathParam(name, "mint address (base58)");
