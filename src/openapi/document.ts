/**
 * The machine-readable description of /v1 (OpenAPI 3.1, version 1.0.0), served at
 * GET /v1/openapi.json and rendered at /docs, made for one Config: every limit and amount the
 * descriptions and examples state (requests per hour, daily limits, image bytes and pixels, the
 * hosted items per key, the vanity budget, the fees) is read from the Config the document is made
 * for, and the field caps from the constants the validators use, so an operator's environment
 * changes the document with the service.
 *
 * Body schemas are the very zod objects the handlers validate with (the metadata, token, relay and
 * webhook requests, the build list's query), turned into JSON Schema by zod 4's own
 * `z.toJSONSchema`; the responses are in ./schemas.ts. Why not `@hono/zod-openapi`'s
 * `createRoute` registry: it wants each route declared through its `OpenAPIHono` (or a second,
 * parallel declaration of every route only to feed the generator), and its zod re-export extends
 * schemas with `.openapi()` metadata; the routes validate with plain zod schemas and their
 * middleware is attached where they are defined. The same JSON Schema comes from zod itself over
 * the same schema objects, so a table of paths here is the smaller change and the routes stay
 * untouched.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { loadConfig } from "../config.ts";
import { LIMITS as METADATA_LIMITS, MetadataRequestSchema } from "../metadata/request.ts";
import { MAX_MARKS_PER_LETTER } from "../domain/text-rules.ts";
import {
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS as IMAGE_FETCH_TIMEOUT_MS,
} from "../metadata/image/fetch-image.ts";
import { RECORD_TTL_MS } from "../idempotency/record.ts";
import {
  authorityRuleSchema,
  BuildRequestSchema,
  supplyBoundSchema,
} from "../tokens/request-schema.ts";
import { transferFeeRuleSchema } from "../tokens/extensions-schema.ts";
import { MAX_NAME_BYTES, MAX_SYMBOL_BYTES, MAX_URI_BYTES } from "../domain/onchain-text.ts";
import { MAX_VANITY_CHARS } from "../tokens/vanity.ts";
import * as S from "./schemas.ts";
import { TokenBuilt, TokenRefreshed } from "../tokens/build-response.ts";
import { RelayRequest } from "../creation/relay-request.ts";
import { BuildRecord } from "../tokens/build-record.ts";
import { tokensPerDay } from "../tokens/tokens-per-day.ts";
import { hostedItemsPerKey, metadataPerDay } from "../metadata/metadata-limits.ts";
import { tokenFeeText } from "../pricing/token-fee.ts";
import { DisplayCheck, DisplayCheckRequest } from "../metadata/display-check-schema.ts";
import {
  CHECK_KEPT_MS,
  DOCUMENT_MAX_BYTES,
  DOCUMENT_TIMEOUT_MS,
} from "../metadata/display-check.ts";
import { integratorPaths, integratorResponses, integratorSchemas } from "./integrator.ts";
import { pathExample, withSamples } from "./samples.ts";
import { updatePaths, updateSchemas } from "./updates.ts";

export const API_VERSION = "1.0.0";

/** What simulation_failed carries, for both operations that can answer it. */
const SIMULATION_FAILED_FIELDS =
  "its fields name the reason: `instruction` {index, program, raisedBy (the program that " +
  "raised it, e.g. the System Program inside a CPI), code (a program's custom code or the " +
  "runtime's error name), name (where the program publishes one), message}, `error` (the " +
  "node's error JSON) and `logs` (the program logs).";

type Json = Record<string, unknown>;

/** What of a Config the document states. */
export type DocumentConfig = Pick<Config, "limits" | "fees" | "vanityBudgetMs" | "quoteTtlS">;

/** The defaults, as a service with nothing set in its environment runs. */
export const DEFAULT_DOCUMENT_CONFIG: DocumentConfig = loadConfig({});

/** 1048576 -> "1 MiB", 65536 -> "64 KiB", else a count of bytes. */
export function byteSize(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n.toLocaleString("en-US")} bytes`;
}

const count = (n: number) => n.toLocaleString("en-US");
const seconds = (ms: number) => `${ms / 1000} s`;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    // Refinements (byte lengths, URL hosts) have no JSON Schema form; the annotations below
    // state them in words instead.
    unrepresentable: "any",
  }) as Json;
  return rest;
}

/** Adds documentation the zod refinements can't express, property by property. */
function annotate(schema: Json, props: Record<string, Json>, extra: Json = {}): Json {
  const properties = { ...(schema.properties as Record<string, Json>) };
  for (const [k, v] of Object.entries(props)) properties[k] = { ...properties[k], ...v };
  return { ...schema, properties, ...extra };
}

const MARKS = `at most ${MAX_MARKS_PER_LETTER} combining marks on one character`;
const SYMBOL_SET = "only letters and digits of the UTS #39 identifier profile " +
  "(Identifier_Status=Allowed), ' - . : / + _, currency signs and whole RGI emoji: nothing " +
  "that renders as a space, as nothing or as a look-alike (fullwidth, mathematical, small " +
  "capitals)";

const metadataRequest = ({ limits }: DocumentConfig) => {
  const image = `up to ${byteSize(limits.imageBytes)} and ${limits.imageMaxWidth} x ` +
    `${limits.imageMaxHeight} pixels`;
  const L = METADATA_LIMITS;
  return annotate(jsonSchema(MetadataRequestSchema, "input"), {
    name: {
      maxLength: L.name,
      minLength: 1,
      description: `up to ${L.name} characters and ${MAX_NAME_BYTES} bytes of UTF-8 (a build ` +
        `on the document must repeat its name, and holds no more), ${MARKS}; names of ` +
        "well-known projects are refused",
    },
    symbol: {
      maxLength: L.symbol,
      minLength: 1,
      description: `up to ${L.symbol} characters and ${MAX_SYMBOL_BYTES} bytes of UTF-8 (as ` +
        `the name); ${SYMBOL_SET}; well-known symbols are refused`,
    },
    description: {
      maxLength: L.description,
      description: `up to ${count(L.description)} characters, ${MARKS}`,
    },
    imageUrl: {
      format: "uri",
      pattern: "^https://",
      description: `public https URL of a PNG, JPEG or WebP image, ${image}; fetched by the ` +
        `service (public addresses only, at most ${DEFAULT_MAX_REDIRECTS} redirects, ` +
        `${seconds(IMAGE_FETCH_TIMEOUT_MS)}). Exactly one of imageUrl / imageBase64.`,
    },
    imageBase64: {
      description: `base64 image data (PNG, JPEG or WebP, ${image}), decoded strictly as ` +
        "RFC 4648 writes it: standard alphabet, = padding required, no whitespace, zero " +
        "trailing bits; a data:<type>;base64, prefix is accepted. Exactly one of imageUrl / " +
        "imageBase64.",
    },
    website: { format: "uri", description: "https URL" },
    twitter: { format: "uri", description: "https URL on x.com or twitter.com" },
    telegram: { format: "uri", description: "https URL on t.me" },
    discord: { format: "uri", description: "https URL on discord.gg or discord.com" },
    attributes: {
      description: `up to ${L.attributes} items {trait_type, value}; value is a string or a ` +
        "finite number",
    },
  }, {
    description: "Unknown members are refused.",
    oneOf: [{ required: ["imageUrl"] }, { required: ["imageBase64"] }],
  });
};

/**
 * The authorities a build hands over in its own transaction, under either token program: an
 * address as for recipient, a wallet or an existing account (a vault), else 400 naming the field.
 */
const handedOver = (what: string, after: string) => ({
  description:
    `hands the ${what} to this address (base58) in the creating transaction, ${after}; ` +
    "still one signer. A wallet (on the ed25519 curve) or an existing account such as a " +
    "multisig vault; an off-curve address with no account, a token account or a program is " +
    "400 naming the field. Token-2022: the update authority is the metadata's and the " +
    "metadata pointer's; the transfer-fee authorities are transferFee.authority's.",
});
const HANDED_AUTHORITIES = {
  mintAuthority: handedOver(
    "mint authority",
    "after the supply is minted and the metadata created; conflicts with revokeMint: true",
  ),
  freezeAuthority: handedOver(
    "freeze authority",
    "as the mint is initialized; conflicts with revokeFreeze: true (which then defaults to false)",
  ),
  updateAuthority: handedOver("metadata update authority", "as the metadata account is created"),
};

const tokenBuildRequest = (cfg: DocumentConfig) =>
  annotate(jsonSchema(BuildRequestSchema, "input"), {
    payer: {
      description: "wallet that signs and pays all costs: base58 of 32 bytes in its canonical " +
        "spelling, a point on the ed25519 curve (a program-derived address cannot sign)",
    },
    name: {
      description: `token name, 1 to ${MAX_NAME_BYTES} bytes of UTF-8 (maxLength counts ` +
        `characters, so a name of fewer characters can still be too long), ${MARKS}; names of ` +
        "well-known projects are refused. With one of our hosted metadataUri: exactly that " +
        "document's name (400 naming name with the document's value otherwise)",
    },
    symbol: {
      description: `1 to ${MAX_SYMBOL_BYTES} bytes of UTF-8 (maxLength counts characters); ` +
        `${SYMBOL_SET}; well-known symbols are refused. With one of our hosted metadataUri: ` +
        "exactly that document's symbol",
    },
    metadataUri: {
      format: "uri",
      description: `absolute https URL of the metadata JSON, up to ${MAX_URI_BYTES} bytes of ` +
        "UTF-8, no credentials, whitespace or control characters. One of this service's " +
        "/m/<id>.json URLs must name a hosted document, whose name and symbol the build repeats",
    },
    supply: {
      description: "whole tokens, multiplied by 10^decimals; exactly one of supply / supplyRaw. " +
        "Decimal digits without leading zeros, at least 1; supply * 10^decimals at most " +
        "u64::MAX (18446744073709551615), which the pattern per decimals (allOf) states",
    },
    supplyRaw: {
      description: "base units, for exact control; exactly one of supply / supplyRaw. " +
        "Decimal digits without leading zeros, from 1 to u64::MAX (18446744073709551615)",
    },
    decimals: { description: "0 to 9" },
    recipient: { description: "wallet that receives the supply (base58); default the payer" },
    revokeMint: {
      description: "permanently removes the mint authority (fixed supply, irreversible)",
    },
    revokeFreeze: { description: "creates the token with no freeze authority" },
    immutableMetadata: {
      description: "makes the on-chain metadata immutable (Token-2022: no update authority, and " +
        "no metadata-pointer authority)",
    },
    tokenProgram: {
      description:
        '"spl-token" (default): the classic SPL Token program with a Metaplex metadata ' +
        'account. "token-2022": a Token-2022 mint holding its own metadata (MetadataPointer and ' +
        "TokenMetadata extensions): no metadata account and no Metaplex protocol fee, so the " +
        "network's share is about a third: for the example request at mainnet's rent 5,566,040 " +
        "lamports instead of 18,621,480 (mint 3,486,960 for 373 bytes + token account 2,074,080 + " +
        "network fee 5,000, against mint 1,461,600 + token account 2,039,280 + metadata account " +
        "5,115,600 + Metaplex fee 10,000,000 + 5,000); each 201's costs names its own figures, and " +
        "GET /v1/pricing states both programs' figures on the serving cluster (token.networkLamports, " +
        "token.token2022NetworkLamports). " +
        "Still one signer: the mint is derived from the payer and a seed.",
    },
    transferFee: {
      description: "Token-2022 only (400 naming transferFee otherwise): a TransferFeeConfig " +
        "taking basisPoints / 10000 of every transfer, at most maximum base units (a u64 as a " +
        "string). The transfer-fee and withdraw-withheld authorities are the payer unless handed over; " +
        "permanent: true sets both to none, so nobody can ever change the fee or withdraw what " +
        "it withheld into the token accounts (irreversible); authority (an address, checked as " +
        "mintAuthority is) hands both to it instead.",
    },
    vanity: {
      description: "grind the mint address: it starts with prefix and/or ends with suffix " +
        `(base58 characters, at most ${MAX_VANITY_CHARS} in total; ignoreCase accepts either ` +
        "case). The service tries seeds for the address (one SHA-256 each, still one signer) " +
        `within a time budget (${seconds(cfg.vanityBudgetMs)}); over it: 422 vanity_timeout and ` +
        "nothing is counted. The 201 says how " +
        "many tries it took. Each character multiplies the work by about 58 (29 with " +
        "ignoreCase); a prefix's first character beyond the first few digits of base58 is much " +
        "rarer (most addresses are 44 characters and start with 1-9 or A-H).",
    },
    ...HANDED_AUTHORITIES,
    nonceAccount: {
      description: "a durable nonce account (base58) whose nonce authority is the payer: the " +
        "transaction then uses its stored nonce as recentBlockhash and begins with " +
        "AdvanceNonceAccount, and stays valid until that nonce moves on (for hardware wallets, " +
        "offline or second-person signing, however long it takes). Still one signer. An " +
        "address with no account, an account that is not an initialized System nonce account " +
        "(80 bytes) or a nonce held by another authority is 400 naming nonceAccount. Create " +
        "one with SystemProgram.createNonceAccount (authorizedPubkey: the payer).",
      examples: ["5Ya5XfJ4W1hfHvr5hLuk9h5aFkVsfc6sTGM8WJgqxzUf"],
    },
  }, {
    description:
      "Exactly one of supply / supplyRaw; supply * 10^decimals (or supplyRaw) must be > 0 and " +
      'fit in a u64. transferFee only with tokenProgram "token-2022". mintAuthority not with ' +
      "revokeMint: true, freezeAuthority not with revokeFreeze: true. Unknown members are " +
      "refused.",
    oneOf: [{ required: ["supply"] }, { required: ["supplyRaw"] }],
    ...supplyBoundSchema,
    dependentSchemas: {
      ...transferFeeRuleSchema.dependentSchemas,
      ...authorityRuleSchema.dependentSchemas,
    },
  });

const schemas = (cfg: DocumentConfig): Record<string, Json> => ({
  Error: jsonSchema(S.ErrorBody, "output"),
  Pricing: jsonSchema(S.Pricing, "output"),
  Me: jsonSchema(S.Me, "output"),
  MetadataRequest: metadataRequest(cfg),
  MetadataCreated: jsonSchema(S.MetadataCreated, "output"),
  DisplayCheckRequest: jsonSchema(DisplayCheckRequest, "input"),
  DisplayCheck: jsonSchema(DisplayCheck, "output"),
  TokenBuildRequest: tokenBuildRequest(cfg),
  TokenBuilt: jsonSchema(
    TokenBuilt.extend({
      displayCheck: DisplayCheck.optional().describe(
        "for a metadataUri we do not host: the result of a POST /v1/metadata/check made for it " +
          "in the last minutes, if any (never fetched during the build; not replayed with an " +
          "Idempotency-Key)",
      ),
    }),
    "output",
  ),
  TokenRefreshed: jsonSchema(TokenRefreshed, "output"),
  RelayRequest: jsonSchema(RelayRequest, "input"),
  RelayAccepted: jsonSchema(S.RelayAccepted, "output"),
  Verification: jsonSchema(S.Verification, "output"),
  BuildRecord: jsonSchema(BuildRecord, "output"),
  ...integratorSchemas((s) => jsonSchema(s, "output"), (s) => jsonSchema(s, "input")),
  ...updateSchemas((s) => jsonSchema(s, "output"), (s) => jsonSchema(s, "input")),
});

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const json = (schema: string, extra: Json = {}) => ({
  "application/json": { schema: ref("schemas", schema), ...extra },
});

const err = (code: string, message: string, fields: Json = {}) => ({
  value: { error: { code, message, fields } },
});

// X-Request-Id is on every response (src/http/request-log.ts) and the RateLimit set on every
// response after the key is accepted (src/http/rate-limit.ts sets them before the handler runs,
// so errors and idempotent replays carry them too): required, so a client may rely on them and a
// generated suite checks them.
const headers = ({ limits }: DocumentConfig) => ({
  "X-Request-Id": {
    description: "id of this request, also in the service's logs",
    required: true,
    schema: { type: "string" },
  },
  "RateLimit-Limit": {
    description: "requests allowed per hour",
    required: true,
    schema: { type: "integer" },
  },
  "RateLimit-Remaining": {
    description: "requests left this hour",
    required: true,
    schema: { type: "integer" },
  },
  "RateLimit-Reset": {
    description: "seconds until the hourly window resets",
    required: true,
    schema: { type: "integer" },
  },
  "RateLimit-Policy": {
    description: `IETF draft form, e.g. "hour";q=${limits.requestsPerHour};w=3600`,
    required: true,
    schema: { type: "string" },
  },
  "RateLimit": {
    description: `IETF draft form, e.g. "hour";r=${limits.requestsPerHour - 1};t=1800`,
    required: true,
    schema: { type: "string" },
  },
  "Retry-After": { description: "seconds to wait before retrying", schema: { type: "integer" } },
  "Idempotent-Replayed": {
    description:
      "true when this is the stored response of an earlier request with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] },
  },
});

const keyedHeaders = {
  "X-Request-Id": ref("headers", "X-Request-Id"),
  "RateLimit-Limit": ref("headers", "RateLimit-Limit"),
  "RateLimit-Remaining": ref("headers", "RateLimit-Remaining"),
  "RateLimit-Reset": ref("headers", "RateLimit-Reset"),
  "RateLimit-Policy": ref("headers", "RateLimit-Policy"),
  "RateLimit": ref("headers", "RateLimit"),
};

const responses = (cfg: DocumentConfig): Record<string, Json> => ({
  BadRequest: {
    description: "invalid_request: a field is missing or invalid (each named in fields); " +
      "insufficient_funds / simulation_failed: see the operation",
    headers: { "X-Request-Id": ref("headers", "X-Request-Id") },
    content: json("Error", {
      examples: {
        invalid_request: err("invalid_request", "Request is invalid", {
          symbol: "must not contain spaces or other whitespace",
          supply: "send exactly one of supply or supplyRaw, not both",
        }),
      },
    }),
  },
  Unauthorized: {
    description: "unauthorized: key missing, wrong, revoked, banned or suspended",
    headers: {
      "X-Request-Id": ref("headers", "X-Request-Id"),
      "WWW-Authenticate": {
        required: true,
        schema: { type: "string", const: 'Bearer realm="api"' },
        description: 'Bearer realm="api"',
      },
    },
    content: json("Error", {
      examples: {
        unauthorized: err(
          "unauthorized",
          "A valid API key is required (Authorization: Bearer <key>); keys are bought at " +
            "https://api.example.com/",
        ),
      },
    }),
  },
  NotFound: {
    description: "not_found: unknown endpoint, token or transaction",
    headers: { "X-Request-Id": ref("headers", "X-Request-Id") },
    content: json("Error", { examples: { not_found: err("not_found", "No such endpoint") } }),
  },
  Conflict: {
    description:
      "idempotency_key_in_flight: the first request with this Idempotency-Key is still running",
    headers: { ...keyedHeaders, "Retry-After": ref("headers", "Retry-After") },
    content: json("Error", {
      examples: {
        idempotency_key_in_flight: err(
          "idempotency_key_in_flight",
          "A request with this Idempotency-Key is still being processed; retry shortly",
          { "Idempotency-Key": "in flight" },
        ),
      },
    }),
  },
  PayloadTooLarge: {
    description: "payload_too_large: 2 MiB for POST /v1/metadata, 64 KiB for every other endpoint",
    headers: { "X-Request-Id": ref("headers", "X-Request-Id") },
    content: json("Error", {
      examples: {
        payload_too_large: err("payload_too_large", "Request body is larger than 65536 bytes", {
          body: "at most 65536 bytes",
        }),
      },
    }),
  },
  Unprocessable: {
    description: "idempotency_key_reused: this Idempotency-Key was used with a different body; " +
      "vanity_timeout (POST /v1/tokens): no address matching vanity was found within the time " +
      "budget (fields: tries, budgetMs, expectedTries); nothing was built or counted",
    headers: keyedHeaders,
    content: json("Error", {
      examples: {
        idempotency_key_reused: err(
          "idempotency_key_reused",
          "This Idempotency-Key was used with a different request body",
          { "Idempotency-Key": "already used with another body" },
        ),
        vanity_timeout: err(
          "vanity_timeout",
          `No mint address matching the vanity pattern within ${cfg.vanityBudgetMs} ms ` +
            "(8612352 tries; about 48744672 are needed on average); nothing was built or counted",
          { tries: 8612352, budgetMs: cfg.vanityBudgetMs, expectedTries: 48744672 },
        ),
      },
    }),
  },
  TooManyRequests: {
    description:
      `rate_limited: the hourly request limit (${
        count(cfg.limits.requestsPerHour)
      } per key) is reached; daily_limit: the daily token (${count(cfg.limits.tokensPerDay)}) or ` +
      `metadata (${count(cfg.limits.metadataPerDay)}) limit is reached (resets 00:00 UTC)`,
    headers: { ...keyedHeaders, "Retry-After": ref("headers", "Retry-After") },
    content: json("Error", {
      examples: {
        rate_limited: err("rate_limited", "Hourly request limit reached"),
        daily_limit: err("daily_limit", "Daily token limit reached"),
      },
    }),
  },
  ServerError: {
    description: "server_error: a fault on the service side; retry",
    headers: { "X-Request-Id": ref("headers", "X-Request-Id") },
    content: json("Error", {
      examples: { server_error: err("server_error", "Something went wrong on our side; retry") },
    }),
  },
  RpcBusy: {
    description: "rpc_busy: the Solana RPC's request budget can't serve this request now (or the " +
      "RPC is rate limiting us); retry after Retry-After seconds",
    headers: {
      "X-Request-Id": ref("headers", "X-Request-Id"),
      "Retry-After": ref("headers", "Retry-After"),
    },
    content: json("Error", {
      examples: {
        rpc_busy: err("rpc_busy", "The Solana RPC is at its request budget; retry in 3 s"),
      },
    }),
  },
  PriceUnavailable: {
    description: "price_unavailable: the SOL price feed is temporarily unavailable; retry. " +
      "rpc_busy: the Solana RPC's request budget can't serve this request now; retry after " +
      "Retry-After seconds",
    headers: {
      "X-Request-Id": ref("headers", "X-Request-Id"),
      "Retry-After": ref("headers", "Retry-After"),
    },
    content: json("Error", {
      examples: {
        price_unavailable: err("price_unavailable", "The SOL price is temporarily unavailable"),
        rpc_busy: err("rpc_busy", "The Solana RPC is at its request budget; retry in 3 s"),
      },
    }),
  },
  ...integratorResponses(json, (name) => ref("headers", name)),
});

const r = (name: string) => ref("responses", name);
const keyedErrors = {
  "401": r("Unauthorized"),
  "429": r("TooManyRequests"),
  "500": r("ServerError"),
};
const postErrors = {
  ...keyedErrors,
  "400": r("BadRequest"),
  "409": r("Conflict"),
  "413": r("PayloadTooLarge"),
  "422": r("Unprocessable"),
};

const ok = (description: string, schema: string, keyed = true, extra: Json = {}) => ({
  description,
  headers: keyed
    ? { ...keyedHeaders, "Idempotent-Replayed": ref("headers", "Idempotent-Replayed") }
    : { "X-Request-Id": ref("headers", "X-Request-Id") },
  content: json(schema, extra),
});

const body = (schema: string, description: string, example?: unknown) => ({
  required: true,
  description,
  content: json(schema, example === undefined ? {} : { example }),
});

// Every one has an example (a generated test suite fills the URL with it).
const pathParam = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string" },
  example: pathExample(name),
});

/** POST /v1/tokens/{mint}/refresh: a slow signer's build re-issued (src/tokens/refresh.ts). */
const refreshPath = (quoteTtlS: number): Json => ({
  post: {
    operationId: "refreshBuild",
    tags: ["Tokens"],
    summary: "Re-issue a build under a fresh blockhash",
    description:
      "For a signer slower than a blockhash lives: re-issues a build of the calling key that " +
      "has not landed (built, submitted or expired) with the same mint, seed, reference and " +
      "instructions and a fresh blockhash, the costs read again. Not a new build: nothing is " +
      "counted against the daily limit. The fee stays the build's quote while it holds " +
      `(${quoteTtlS} s from it), and is re-priced at the current SOL price after; ` +
      "`feeQuote` says which. Every message issued for the build stays valid until its own " +
      "blockhash expires, and the relay accepts each within the hour after the last refresh: " +
      "whichever lands first is the creation, and the others then fail harmlessly (the mint " +
      "exists). Webhook endpoints subscribed to token.refreshed get one per refresh. " +
      "400 invalid_request naming mint: the build has landed (confirmed, failed or " +
      "unverified), or it uses a durable nonce (it does not expire; once its nonce moved on " +
      "without it, build again). Another key's mint answers 404 like an unknown one. " +
      "400 insufficient_funds and simulation_failed as for a build; " + SIMULATION_FAILED_FIELDS,
    parameters: [pathParam("mint", "mint address (base58)"), ref("parameters", "IdempotencyKey")],
    responses: {
      "200": ok("The build, re-issued", "TokenRefreshed"),
      ...postErrors,
      "404": r("NotFound"),
      "503": r("PriceUnavailable"),
    },
  },
});

const paths = ({ limits, fees, quoteTtlS }: DocumentConfig): Record<string, Json> => ({
  "/v1/pricing": {
    get: {
      operationId: "getPricing",
      tags: ["Pricing"],
      summary: "Current fees and limits",
      description: `Needs no key. ${tokenFeeText.formula(fees)}`,
      security: [],
      responses: {
        "200": ok("The pricing object", "Pricing", false),
        "500": r("ServerError"),
        "503": r("PriceUnavailable"),
      },
    },
  },
  "/v1/me": {
    get: {
      operationId: "getMe",
      tags: ["Key"],
      summary: "The calling key and today's usage",
      responses: { "200": ok("The key/usage object", "Me"), ...keyedErrors },
    },
  },
  "/v1/metadata": {
    post: {
      operationId: "hostMetadata",
      tags: ["Metadata"],
      summary: "Host token metadata and its image",
      description:
        "Validates the fields, stores the image and a metadata JSON document and returns stable " +
        "public URLs; pass metadataUri to POST /v1/tokens. Each accepted call counts toward the " +
        `${metadataPerDay.text(limits, count)} and the ${hostedItemsPerKey.text(limits, count)}.`,
      parameters: [ref("parameters", "IdempotencyKey")],
      // The example is the samples' body (./samples.ts), the one the curl sample sends.
      requestBody: body("MetadataRequest", "The metadata and one image"),
      responses: { "201": ok("Hosted", "MetadataCreated"), ...postErrors },
    },
  },
  "/v1/metadata/check": {
    post: {
      operationId: "checkMetadataDisplay",
      tags: ["Metadata"],
      summary: "What wallets and explorers will show for a metadata URI",
      description:
        "Run it before POST /v1/tokens on a metadataUri you host yourself: the token's " +
        "URI is on chain for good. Fetches the document (at most " +
        `${byteSize(DOCUMENT_MAX_BYTES)}, ${seconds(DOCUMENT_TIMEOUT_MS)}, sent with Origin: ` +
        "https://explorer.solana.com) and its image (at most " +
        `${byteSize(limits.imageBytes)}, ${seconds(IMAGE_FETCH_TIMEOUT_MS)}) through the same ` +
        "address-checked fetcher as imageUrl, decodes the image as an upload is decoded " +
        `(${limits.imageMaxWidth} x ${limits.imageMaxHeight} pixels at most) and lists every ` +
        "problem with a code and a sentence. A metadataUri this service hosts is answered from " +
        "its store, without a fetch. Counts toward the hourly request limit " +
        `(${count(limits.requestsPerHour)} per key), not the daily ones. The answer is kept ` +
        `${CHECK_KEPT_MS / 60_000} minutes for a build on the same URI. Try it from the ` +
        "console on this page.",
      requestBody: body("DisplayCheckRequest", "The URI, and the name and symbol to expect", {
        metadataUri: "https://example.com/token.json",
        name: "Example Token",
        symbol: "EXT",
      }),
      responses: {
        "200": ok("What will be shown, and the problems", "DisplayCheck"),
        ...keyedErrors,
        "400": r("BadRequest"),
        "413": r("PayloadTooLarge"),
      },
    },
  },
  "/v1/tokens": {
    post: {
      operationId: "buildToken",
      tags: ["Tokens"],
      summary: "Build an unsigned token-creation transaction",
      description:
        "Validates the parameters, checks the payer's SOL balance, simulates the transaction and " +
        "returns it unsigned (legacy, one required signature: the payer). Nothing is sent to the " +
        "network. The transaction holds, in order: compute budget, mint account (derived from " +
        "the payer and a random seed; funded with its rent by a transfer, then allocated with " +
        "the seed, so lamports already at its address do not stop it), mint initialization, " +
        "the recipient's associated token " +
        "account (idempotent), minting of the full supply, the metadata account, optionally the " +
        "mint-authority revocation, and the fee transfer to the treasury with a read-only " +
        "reference account. Sign and submit within about 60 seconds. Each successful build " +
        `${tokensPerDay.text(limits, count)}.\n\n` +
        "Durable nonce (opt-in, for signers slower than a blockhash lives): with " +
        '`"nonceAccount": "<a nonce account whose authority is the payer>"` the transaction ' +
        "begins with AdvanceNonceAccount (then the compute budget and the rest, in the order " +
        "above), its recentBlockhash is the account's stored nonce, and it does not expire: " +
        "the 201 has lastValidBlockHeight and expiresInSeconds null and names nonceAccount. It " +
        "stays valid until the nonce moves on, which landing it does; if the nonce moves on " +
        "otherwise the build expires (webhook token.expired, with the reason). The nonce costs " +
        "nothing beyond the signature's fee; costs are exact as for any build.\n\n" +
        "The 201 carries `costs`: every lamport the payer spends if the transaction lands " +
        "(network and priority fee, the rent of the mint, token account and metadata account, " +
        `the Token Metadata program's protocol fee and ${tokenFeeText.inBuild(fees)}) and ` +
        "their sum, totalLamports, " +
        "read from the cluster's rent.\n\n" +
        "400 insufficient_funds: the payer cannot cover the fee plus network costs; its fields " +
        "name needed, available, shortfall and the same costs. A payer may hold exactly " +
        "totalLamports (it ends at 0) or at least totalLamports plus a wallet's rent-exempt " +
        "minimum. " +
        "400 simulation_failed: the network simulation says the transaction would fail; " +
        SIMULATION_FAILED_FIELDS,
      parameters: [ref("parameters", "IdempotencyKey")],
      requestBody: body("TokenBuildRequest", "What to create"),
      responses: {
        "201": ok("The unsigned transaction and what it creates", "TokenBuilt"),
        ...postErrors,
        "503": r("PriceUnavailable"),
      },
    },
  },
  "/v1/tokens/{mint}": {
    get: {
      operationId: "getBuildRecord",
      tags: ["Tokens"],
      summary: "The build record of a mint created by the calling key",
      description: "Another key's mint answers 404 like an unknown one.",
      parameters: [pathParam("mint", "mint address (base58)")],
      responses: {
        "200": ok("The build record", "BuildRecord"),
        "400": r("BadRequest"),
        "404": r("NotFound"),
        ...keyedErrors,
      },
    },
  },
  "/v1/tokens/{mint}/refresh": refreshPath(quoteTtlS),
  "/v1/transactions": {
    post: {
      operationId: "submitTransaction",
      tags: ["Transactions"],
      summary: "Relay a signed transaction (optional)",
      description:
        "Accepts only a transaction whose message is byte-identical to one built for the calling " +
        "key within the last hour, signed by its payer, before its blockhash expires (a durable " +
        "nonce build's: at any time while the build is open, i.e. until its nonce moves on); " +
        "otherwise 400 invalid_request with fields.transaction saying which. Sent with " +
        "preflight and " +
        "re-sent until confirmed or expired. An update's transaction (POST " +
        "/v1/tokens/{mint}/update) is accepted the same way, signed by the update's authority " +
        "before its blockhash expires; the answer then carries `updateId`, and the update's " +
        "outcome (landed, or failed when it landed with an error or expired unseen) is " +
        "recorded with its webhook without a verification being asked for. " +
        "400 simulation_failed: the network refused it; " +
        SIMULATION_FAILED_FIELDS,
      parameters: [ref("parameters", "IdempotencyKey")],
      requestBody: body(
        "RelayRequest",
        "The signed transaction. The example is a real signed legacy transaction (a throwaway " +
          "key's transfer to itself), so it decodes and verifies, but no key built it: it " +
          "answers 400 invalid_request naming transaction (unknown build). The one to send is a " +
          "201's `transaction` from POST /v1/tokens signed by its payer (a fresh blockhash, " +
          "within about 60 s), which no static document can hold.",
      ),
      responses: { "202": ok("Submitted", "RelayAccepted"), ...postErrors, "503": r("RpcBusy") },
    },
  },
  "/v1/transactions/{signature}": {
    get: {
      operationId: "verifyTransaction",
      tags: ["Transactions"],
      summary: "Verify a creation",
      description:
        "Reads the confirmed transaction from the network and checks that the mint, the full " +
        "supply and the service fee are present. pending: known or in flight, not yet " +
        "confirmed; confirmed; failed: landed with an error or its blockhash expired; " +
        "unverified: landed, but mint, supply or fee do not check out, or it is not one of this " +
        "key's builds. A final answer is served from the service's records.",
      parameters: [pathParam("signature", "transaction signature (base58)")],
      responses: {
        "200": ok("The verification", "Verification"),
        "400": r("BadRequest"),
        "404": r("NotFound"),
        ...keyedErrors,
        "503": r("RpcBusy"),
      },
    },
  },
  "/v1/openapi.json": {
    get: {
      operationId: "getOpenApi",
      tags: ["Meta"],
      summary: "This document",
      security: [],
      responses: {
        "200": {
          description: "OpenAPI 3.1 description of /v1",
          content: { "application/json": { schema: { type: "object" } } },
        },
      },
    },
  },
});

/** The seed's operations and the integrator's, which may share a path (GET beside POST /v1/tokens). */
function allPaths(cfg: DocumentConfig): Record<string, Json> {
  const all = paths(cfg);
  const helpers = { ok, r, keyedErrors, pathParam, body };
  const updates = updatePaths(
    { ...helpers, idempotencyKey: ref("parameters", "IdempotencyKey"), postErrors },
    cfg.fees,
  );
  for (const [path, item] of Object.entries({ ...integratorPaths(helpers), ...updates })) {
    all[path] = { ...all[path], ...item };
  }
  return all;
}

export interface DocumentOptions {
  /** The service's public base URL; paths carry the /v1 prefix themselves. */
  serverUrl: string;
  /** The configuration the service runs with; unset: the defaults. */
  config?: DocumentConfig;
}

export function openApiDocument(opts: DocumentOptions) {
  const cfg = opts.config ?? DEFAULT_DOCUMENT_CONFIG;
  return {
    openapi: "3.1.0",
    info: {
      title: "Token-Creation Transaction Builder API",
      version: API_VERSION,
      description:
        "Non-custodial HTTP/JSON API that builds transactions creating an SPL token, hosts token " +
        "metadata, optionally relays the signed transaction and verifies the creation. The " +
        "service never sees a private key. Server-side use only: no CORS.\n\n" +
        `Fees: ${feesAndLimits(cfg)}. ` +
        "Amounts that can exceed 2^53 (lamports, supplies) are strings of decimal digits. " +
        "POST /v1/metadata, /v1/tokens and /v1/transactions accept an Idempotency-Key.",
    },
    servers: [{ url: opts.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: "Pricing" },
      { name: "Key" },
      { name: "Metadata" },
      { name: "Tokens" },
      { name: "Transactions" },
      { name: "Webhooks" },
      { name: "Meta" },
    ],
    paths: withSamples(allPaths(cfg), opts.serverUrl, cfg),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <key_prefix>_live_<key_id>_<secret>`. Created in the portal " +
            `after the one-time access fee (${cfg.fees.accessUsd} USD); shown once.`,
        },
      },
      schemas: schemas(cfg),
      responses: responses(cfg),
      headers: headers(cfg),
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: `1 to 255 printable ASCII characters, scoped to the key, kept ` +
            `${RECORD_TTL_MS / 3_600_000} h. A retry with ` +
            "the same key and body replays the stored response without doing the work again.",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      },
    },
  };
}

const feesAndLimits = ({ fees, limits }: DocumentConfig) =>
  `${fees.accessUsd} USD once for an API key, ${tokenFeeText.perToken(fees)}. Limits per key: ${
    count(limits.requestsPerHour)
  } requests per hour, ` +
  `${count(limits.tokensPerDay)} tokens and ${count(limits.metadataPerDay)} metadata items per ` +
  `UTC day, ${count(limits.hostedItemsPerKey)} hosted items; images up to ` +
  `${byteSize(limits.imageBytes)} and ${limits.imageMaxWidth} x ${limits.imageMaxHeight} pixels`;
