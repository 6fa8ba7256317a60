/**
 * POST /v1/tokens body: the seed's field table as a strict schema, then the rules that span
 * fields (exactly one of supply/supplyRaw, the u64 range of the base-unit supply, well-known
 * names). Every bad field is named at once, so a client fixes its request in one round.
 */
import { PublicKey } from "@solana/web3.js";
import { z } from "zod";
import { parseAddress } from "../kernel/base58.ts";
import { isSymbolCharacterMessage, rendersBlank, textProblem } from "../domain/text-rules.ts";
import { ApiError } from "../kernel/errors.ts";
import { firstPass } from "../kernel/zod-fields.ts";
import { BASE58_ADDRESS_PATTERN } from "../kernel/described.ts";
import { decimalAtMostPattern } from "../kernel/decimal-bound.ts";
import { isOwnMetadataUri } from "../metadata/document.ts";
import { type WellKnownMatcher, wellKnownMessage } from "./well-known-names.ts";
import {
  tokenProgramField,
  transferFeeField,
  type TransferFeeRequest,
  transferFeeRule,
  vanityField,
  type VanityRequest,
} from "./extensions-schema.ts";

import { MAX_NAME_BYTES, MAX_SYMBOL_BYTES, MAX_URI_BYTES } from "../domain/onchain-text.ts";
export const U64_MAX = (1n << 64n) - 1n;

export interface BuildRequest {
  payer: PublicKey;
  recipient: PublicKey;
  name: string;
  symbol: string;
  metadataUri: string;
  decimals: number;
  /** The full supply in base units, 0 < supplyRaw <= u64::MAX. */
  supplyRaw: bigint;
  revokeMint: boolean;
  revokeFreeze: boolean;
  immutableMetadata: boolean;
  /** Absent: "spl-token" (the classic program with a Metaplex metadata account). */
  tokenProgram?: "spl-token" | "token-2022";
  /** Token-2022 only. */
  transferFee?: TransferFeeRequest | null;
  /** Grind the seed until the mint address matches. */
  vanity?: VanityRequest | null;
  /** Handed over in the creating transaction (base58); absent: the payer keeps it. */
  mintAuthority?: string | null;
  freezeAuthority?: string | null;
  updateAuthority?: string | null;
  /**
   * A durable nonce account whose authority is the payer: the transaction uses its nonce and
   * does not expire (src/tokens/nonce.ts). Absent: a recent blockhash, valid about 60 s.
   */
  nonceAccount?: PublicKey | null;
}

/** The authorities a build can hand to another address, each conflicting with its revoke. */
const AUTHORITIES = [
  ["mintAuthority", "revokeMint"],
  ["freezeAuthority", "revokeFreeze"],
  ["updateAuthority", null],
] as const;

/** The conflicts above in JSON Schema, for the OpenAPI document. */
export const authorityRuleSchema = {
  dependentSchemas: Object.fromEntries(
    AUTHORITIES.filter(([, revoke]) => revoke !== null).map(([field, revoke]) => [
      field,
      { not: { required: [revoke!], properties: { [revoke!]: { const: true } } } },
    ]),
  ),
};

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

const ADDRESS_MESSAGE = "must be a base58 Solana address (32 bytes)";
// Each `.meta` states in JSON Schema (for the OpenAPI document) what of the refinement beside it
// JSON Schema can say; the rest the document says in words.
export const address = z.string().refine((s) => parseAddress(s) !== null, {
  message: ADDRESS_MESSAGE,
})
  .meta({ pattern: BASE58_ADDRESS_PATTERN });

export const payerAddress = z.string().superRefine((s, ctx) => {
  const k = parseAddress(s);
  if (!k) ctx.addIssue({ code: "custom", message: ADDRESS_MESSAGE });
  else if (!PublicKey.isOnCurve(k.toBytes())) {
    ctx.addIssue({
      code: "custom",
      message:
        "must be a wallet address on the ed25519 curve (a program-derived address cannot sign)",
    });
  }
}).meta({ pattern: BASE58_ADDRESS_PATTERN });

// The text rules (src/domain/text-rules.ts) come first: a lone surrogate's UTF-8 length is that
// of the U+FFFD it would become, not of what the record would keep.
export const name = z.string().superRefine((s, ctx) => {
  const problem = textProblem(s, "name");
  if (problem) ctx.addIssue({ code: "custom", message: problem });
  else if (rendersBlank(s)) ctx.addIssue({ code: "custom", message: "must not be empty" });
  else if (utf8Bytes(s) > MAX_NAME_BYTES) {
    ctx.addIssue({ code: "custom", message: `at most ${MAX_NAME_BYTES} bytes of UTF-8` });
  }
}).meta({ minLength: 1, maxLength: MAX_NAME_BYTES }); // a code point is at least one byte

export const symbol = z.string().superRefine((s, ctx) => {
  if (s === "") return void ctx.addIssue({ code: "custom", message: "must not be empty" });
  const problem = textProblem(s, "symbol");
  if (problem) ctx.addIssue({ code: "custom", message: problem });
  else if (utf8Bytes(s) > MAX_SYMBOL_BYTES) {
    ctx.addIssue({ code: "custom", message: `at most ${MAX_SYMBOL_BYTES} bytes of UTF-8` });
  }
}).meta({ minLength: 1, maxLength: MAX_SYMBOL_BYTES });

/**
 * An absolute https URL, or one of this service's own hosted metadata URLs (at `publicBaseUrl`),
 * which config allows to be http only on a local chain: the contract's metadata-then-build flow
 * must work on the embedded defaults.
 */
export const metadataUriField = (publicBaseUrl: string | null) =>
  z.string().superRefine((s, ctx) => {
    if (utf8Bytes(s) > MAX_URI_BYTES) {
      ctx.addIssue({ code: "custom", message: `at most ${MAX_URI_BYTES} bytes` });
      return;
    }
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be an absolute https URL" });
      return;
    }
    const own = publicBaseUrl !== null && isOwnMetadataUri(publicBaseUrl, s);
    // Spelled as written, not as the URL parser forgives it ("HTTPS:", "https:host"): the URI is
    // written on chain as sent.
    if ((!s.startsWith("https://") && !own) || !url.hostname) {
      ctx.addIssue({ code: "custom", message: "must be an absolute https URL" });
    } else if (url.username || url.password) {
      // The URI is written on chain for good; credentials in it would be published forever.
      ctx.addIssue({ code: "custom", message: "must not contain credentials" });
    } else if (/[\s\p{Cc}]/u.test(s)) {
      ctx.addIssue({
        code: "custom",
        message: "must not contain whitespace or control characters",
      });
    }
  }).meta({ pattern: "^https://", maxLength: MAX_URI_BYTES });

// Strings, because supplies exceed 2^53; the length cap only stops absurd inputs early, the u64
// check below is the real bound. No leading zeros: one spelling per number.
const digits = z.string().regex(
  /^(?:0|[1-9][0-9]{0,39})$/,
  "must be a string of decimal digits, without leading zeros",
);

const buildRequestSchema = (publicBaseUrl: string | null) =>
  z.strictObject({
    payer: payerAddress,
    name,
    symbol,
    metadataUri: metadataUriField(publicBaseUrl),
    supply: digits.meta({ pattern: decimalAtMostPattern(U64_MAX) }).optional(),
    supplyRaw: digits.meta({ pattern: decimalAtMostPattern(U64_MAX) }).optional(),
    decimals: z.number({ error: "must be an integer from 0 to 9" }).int(
      "must be an integer from 0 to 9",
    )
      .min(0, "must be an integer from 0 to 9").max(9, "must be an integer from 0 to 9").default(9),
    recipient: address.optional(),
    revokeMint: z.boolean({ error: "must be true or false" }).default(false),
    revokeFreeze: z.boolean({ error: "must be true or false" }).default(true),
    immutableMetadata: z.boolean({ error: "must be true or false" }).default(false),
    tokenProgram: tokenProgramField,
    transferFee: transferFeeField.optional(),
    vanity: vanityField.optional(),
    mintAuthority: address.optional(),
    freezeAuthority: address.optional(),
    updateAuthority: address.optional(),
    nonceAccount: address.optional(),
  });

/**
 * The body's shape as the contract states it (https only); the cross-field rules live in
 * `parseBuildRequest`. The OpenAPI document uses it.
 */
export const BuildRequestSchema = buildRequestSchema(null);

/** One schema per service (per PUBLIC_BASE_URL), built on first use. */
const pass = firstPass(buildRequestSchema);

/**
 * Throws 400 invalid_request naming every bad field, or returns the build request.
 * `publicBaseUrl`: this service's, whose hosted metadata URLs are accepted whatever their scheme.
 */
export function parseBuildRequest(
  raw: unknown,
  wellKnown: WellKnownMatcher,
  publicBaseUrl: string | null = null,
): BuildRequest {
  const { parsed, fields, body } = pass(raw, publicBaseUrl);
  const ok = (f: string) => !(f in fields) && !("body" in fields);

  const hasSupply = body.supply !== undefined;
  const hasRaw = body.supplyRaw !== undefined;
  let supplyRaw: bigint | null = null;
  if (hasSupply === hasRaw && !("body" in fields)) {
    const msg = hasSupply
      ? "send exactly one of supply or supplyRaw, not both"
      : "one of supply or supplyRaw is required";
    fields.supply = msg;
    fields.supplyRaw = msg;
  } else if (hasSupply && ok("supply") && ok("decimals")) {
    const decimals = (body.decimals as number | undefined) ?? 9;
    supplyRaw = BigInt(body.supply as string) * 10n ** BigInt(decimals);
    const problem = supplyProblem(supplyRaw, `supply * 10^${decimals}`);
    if (problem) fields.supply = problem;
  } else if (hasRaw && ok("supplyRaw")) {
    supplyRaw = BigInt(body.supplyRaw as string);
    const problem = supplyProblem(supplyRaw, "supplyRaw");
    if (problem) fields.supplyRaw = problem;
  }

  for (const f of ["name", "symbol"] as const) {
    // A look-alike is named as such even when its letters are outside the symbol set too.
    if (!ok(f) && !isSymbolCharacterMessage(fields[f])) continue;
    const hit = wellKnown.match(body[f] as string);
    if (hit) {
      fields[f] = wellKnownMessage(hit);
    }
  }

  const feeProblem = ok("transferFee") && ok("tokenProgram") ? transferFeeRule(body) : null;
  if (feeProblem) fields.transferFee = feeProblem;
  Object.assign(fields, authorityConflicts(body));

  if (!parsed.success || Object.keys(fields).length > 0 || supplyRaw === null) {
    throw new ApiError("invalid_request", "Request is invalid", fields);
  }
  const d = parsed.data;
  const payer = new PublicKey(d.payer);
  return {
    payer,
    recipient: d.recipient ? new PublicKey(d.recipient) : payer,
    name: d.name,
    symbol: d.symbol,
    metadataUri: d.metadataUri,
    decimals: d.decimals,
    supplyRaw,
    revokeMint: d.revokeMint,
    revokeFreeze: d.revokeFreeze,
    immutableMetadata: d.immutableMetadata,
    tokenProgram: d.tokenProgram,
    transferFee: d.transferFee ?? null,
    vanity: d.vanity ?? null,
    mintAuthority: d.mintAuthority ?? null,
    freezeAuthority: d.freezeAuthority ?? null,
    // A freeze authority handed over is not revoked (revokeFreeze defaults to true otherwise).
    ...(d.freezeAuthority ? { revokeFreeze: false } : {}),
    updateAuthority: d.updateAuthority ?? null,
    nonceAccount: d.nonceAccount ? new PublicKey(d.nonceAccount) : null,
  };
}

/**
 * The u64 bound on supply * 10^decimals as JSON Schema: per decimals (9 when absent), the most
 * whole tokens that fit. The OpenAPI document adds it to the request's schema.
 */
export const supplyBoundSchema = {
  allOf: Array.from({ length: 10 }, (_, d) => {
    const given = { required: ["decimals"], properties: { decimals: { const: d } } };
    return {
      if: d === 9 ? { anyOf: [given, { not: { required: ["decimals"] } }] } : given,
      then: {
        properties: { supply: { pattern: decimalAtMostPattern(U64_MAX / 10n ** BigInt(d)) } },
      },
    };
  }),
};

/** An authority handed to an address cannot also be revoked: both fields are named. */
function authorityConflicts(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, revoke] of AUTHORITIES) {
    if (body[field] === undefined) continue;
    if (revoke && body[revoke] === true) {
      out[field] = `conflicts with ${revoke}: an authority handed over is not revoked`;
      out[revoke] = `conflicts with ${field}: send one of them`;
    }
  }
  return out;
}

function supplyProblem(raw: bigint, what: string): string | null {
  if (raw === 0n) return "must be greater than 0";
  if (raw > U64_MAX) return `${what} must fit in a u64 (at most ${U64_MAX} base units)`;
  return null;
}
