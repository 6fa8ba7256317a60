/**
 * The POST /v1/tokens fields beyond the contract's table: which token program, a Token-2022
 * transfer fee, and a vanity mint address. Kept apart from request-schema.ts so the contract's
 * own fields read as the contract states them.
 */
import { z } from "zod";
import { decimalAtMostPattern } from "../kernel/decimal-bound.ts";
import { parseAddress } from "../kernel/base58.ts";
import { MAX_VANITY_CHARS, vanityCharsProblem } from "./vanity.ts";

const U64_MAX = (1n << 64n) - 1n;
export const MAX_BASIS_POINTS = 10_000;

export interface TransferFeeRequest {
  basisPoints: number;
  /** Base units, at most u64::MAX. */
  maximum: bigint;
  /** No authority at all: nobody can ever change the fee or withdraw what it withheld. */
  permanent: boolean;
  /** Both transfer-fee authorities handed to this address (base58); absent: the payer's. */
  authority?: string | null;
}

export interface VanityRequest {
  prefix: string;
  suffix: string;
  ignoreCase: boolean;
}

export const tokenProgramField = z.enum(["spl-token", "token-2022"], {
  error: 'must be "spl-token" or "token-2022"',
}).default("spl-token");

export const transferFeeField = z.strictObject({
  basisPoints: z.number({ error: `must be an integer from 0 to ${MAX_BASIS_POINTS}` }).int(
    `must be an integer from 0 to ${MAX_BASIS_POINTS}`,
  ).min(0, `must be an integer from 0 to ${MAX_BASIS_POINTS}`).max(
    MAX_BASIS_POINTS,
    `must be an integer from 0 to ${MAX_BASIS_POINTS}`,
  ),
  maximum: z.string().regex(
    /^(?:0|[1-9][0-9]{0,39})$/,
    "must be a string of decimal digits without leading zeros (base units)",
  )
    // zod runs this refinement even when the pattern failed: BigInt("20.5") would throw.
    .refine(
      (s) => !/^[0-9]+$/.test(s) || BigInt(s) <= U64_MAX,
      `must fit in a u64 (at most ${U64_MAX})`,
    )
    .meta({ pattern: decimalAtMostPattern(U64_MAX, 0n) })
    .transform((s) => BigInt(s)),
  permanent: z.boolean({ error: "must be true or false" }).default(false),
  authority: z.string().refine((a) => parseAddress(a) !== null, {
    message: "must be a base58 Solana address (32 bytes)",
  }).optional(),
}, { error: "must be an object { basisPoints, maximum, permanent?, authority? }" }).superRefine(
  (f, ctx) => {
    if (f.permanent && f.authority !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["authority"],
        message: "conflicts with permanent: a permanent fee has no authority to hand over",
      });
    }
  },
);

/** The rule below in JSON Schema, for the OpenAPI document. */
export const transferFeeRuleSchema = {
  dependentSchemas: {
    transferFee: {
      required: ["tokenProgram"],
      properties: { tokenProgram: { const: "token-2022" } },
    },
  },
};

/** The cross-field rule: a transfer fee is a Token-2022 extension. */
export function transferFeeRule(body: Record<string, unknown>): string | null {
  if (body.transferFee === undefined || body.transferFee === null) return null;
  return body.tokenProgram === "token-2022"
    ? null
    : 'only with tokenProgram "token-2022" (the classic token program has no transfer fees)';
}

export const vanityField = z.strictObject({
  prefix: z.string({ error: "must be a string" }).default(""),
  suffix: z.string({ error: "must be a string" }).default(""),
  ignoreCase: z.boolean({ error: "must be true or false" }).default(false),
}, { error: "must be an object { prefix?, suffix?, ignoreCase? }" }).superRefine((v, ctx) => {
  for (const part of ["prefix", "suffix"] as const) {
    const problem = vanityCharsProblem(v[part], v.ignoreCase);
    if (problem) ctx.addIssue({ code: "custom", path: [part], message: problem });
  }
  const total = [...v.prefix].length + [...v.suffix].length;
  if (total === 0) {
    ctx.addIssue({ code: "custom", message: "give a prefix, a suffix or both" });
  } else if (total > MAX_VANITY_CHARS) {
    ctx.addIssue({
      code: "custom",
      message: `at most ${MAX_VANITY_CHARS} characters in total (prefix + suffix), got ${total}`,
    });
  }
}).meta(vanityJsonSchema());

/**
 * The refinement above in JSON Schema: base58 characters (either case of a letter with
 * ignoreCase), at least one and at most MAX_VANITY_CHARS in prefix and suffix together.
 */
function vanityJsonSchema() {
  const chars = (pattern: string) => ({
    properties: { prefix: { pattern }, suffix: { pattern } },
  });
  // n characters of prefix (none: "" or absent, and then a suffix), the rest at most the suffix
  const lengths = Array.from({ length: MAX_VANITY_CHARS + 1 }, (_, n) =>
    n === 0
      ? {
        properties: {
          prefix: { maxLength: 0 },
          suffix: { minLength: 1, maxLength: MAX_VANITY_CHARS },
        },
        required: ["suffix"],
      }
      : {
        properties: {
          prefix: { minLength: n, maxLength: n },
          suffix: { maxLength: MAX_VANITY_CHARS - n },
        },
        required: ["prefix"],
      });
  return {
    if: { required: ["ignoreCase"], properties: { ignoreCase: { const: true } } },
    then: chars("^[1-9A-Za-z]*$"),
    else: chars("^[1-9A-HJ-NP-Za-km-z]*$"),
    anyOf: lengths,
  };
}
