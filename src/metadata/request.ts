/**
 * The POST /v1/metadata body: a strict schema (unknown members are refused) and a parse that names
 * every bad field at once, the imageUrl / imageBase64 one-of included.
 */
import {
  isSymbolCharacterMessage,
  rendersBlank,
  type TextKind,
  textProblem,
} from "../domain/text-rules.ts";
import { z } from "zod";
import { zodFields } from "../kernel/zod-fields.ts";
import { ApiError } from "../kernel/errors.ts";
import { type WellKnownMatcher, wellKnownMessage } from "../tokens/well-known-names.ts";
import { MAX_NAME_BYTES, MAX_SYMBOL_BYTES } from "../domain/onchain-text.ts";

/** Field caps. The seed fixes name, symbol, description and the attribute count; the rest are ours. */
export const LIMITS = {
  name: 32,
  symbol: 10,
  description: 1000,
  attributes: 10,
  /** Ours: keeps the stored document (and so its event) far below KV's 64 KiB value limit. */
  traitType: 64,
  attributeValue: 200,
  linkUrl: 256,
  imageUrl: 2048,
} as const;

/** Characters are code points: an emoji is one character, as a person would count it. */
const chars = (s: string) => [...s].length;
const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

/**
 * A hosted document's name and symbol must be repeated by the build made on it, which writes them
 * on chain in at most this many bytes of UTF-8: a longer one could be hosted but never built.
 */
const BUILD_BYTES: Partial<Record<TextKind, number>> = {
  name: MAX_NAME_BYTES,
  symbol: MAX_SYMBOL_BYTES,
};

const str = (what = "a string") =>
  z.string({ error: (i) => (i.input === undefined ? "required" : `must be ${what}`) });

/**
 * A text field under the shared text rules (src/domain/text-rules.ts): well-formed, no control
 * characters but a description's newlines, no bidi controls, and for names and symbols nothing
 * that renders blank. One message per field, the first rule broken.
 */
const text = (max: number, kind: TextKind, opts: { required?: boolean } = {}) =>
  str().superRefine((s, ctx) => {
    const problem = textProblem(s, kind);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
    else if (opts.required && rendersBlank(s)) {
      ctx.addIssue({ code: "custom", message: "must not be empty" });
    } else if (chars(s) > max) {
      ctx.addIssue({ code: "custom", message: `at most ${max} characters` });
    } else if (BUILD_BYTES[kind] !== undefined && utf8Bytes(s) > BUILD_BYTES[kind]) {
      ctx.addIssue({
        code: "custom",
        message: `at most ${BUILD_BYTES[kind]} bytes of UTF-8 (got ${utf8Bytes(s)}): a build ` +
          `on this document repeats its ${kind}, and the chain holds no more`,
      });
    }
  }).meta({ maxLength: max, ...(opts.required ? { minLength: 1 } : {}) });

/** Spelled as written ("https://"), not only as the URL parser forgives it ("HTTPS:", "https:x"). */
function httpsUrl(s: string): URL | null {
  if (!s.startsWith("https://")) return null;
  try {
    const u = new URL(s);
    if (u.protocol !== "https:" || u.hostname === "" || u.username || u.password) return null;
    return u;
  } catch {
    return null;
  }
}

/** An https link, optionally only on the given hosts (then on the default port only). */
const link = (hosts?: readonly string[]) => {
  const where = hosts ? ` on ${hosts.join(", ")}` : "";
  return str("an https URL")
    .refine((s) => chars(s) <= LIMITS.linkUrl, `at most ${LIMITS.linkUrl} characters`)
    .refine((s) => {
      const u = httpsUrl(s);
      if (!u) return false;
      return !hosts || (hosts.includes(u.hostname) && u.port === "");
    }, `must be an https URL${where}`)
    .meta({ pattern: "^https://", maxLength: LIMITS.linkUrl })
    .transform((s) => new URL(s).href);
};

export const TWITTER_HOSTS = ["x.com", "www.x.com", "twitter.com", "www.twitter.com"] as const;
export const TELEGRAM_HOSTS = ["t.me"] as const;
export const DISCORD_HOSTS = ["discord.gg", "discord.com", "www.discord.com"] as const;

const Attribute = z.strictObject({
  trait_type: text(LIMITS.traitType, "line", { required: true }),
  value: z.union([text(LIMITS.attributeValue, "line"), z.number()], {
    error: (i) => i.input === undefined ? "required" : "must be a string or a finite number",
  }),
}, { error: "must be an object {trait_type, value}" });

export const MetadataRequestSchema = z.strictObject({
  name: text(LIMITS.name, "name", { required: true }),
  symbol: text(LIMITS.symbol, "symbol", { required: true }),
  description: text(LIMITS.description, "multiline").optional(),
  imageUrl: str("a URL").max(LIMITS.imageUrl, `at most ${LIMITS.imageUrl} characters`).optional(),
  imageBase64: str("a base64 string").optional(),
  website: link().optional(),
  twitter: link(TWITTER_HOSTS).optional(),
  telegram: link(TELEGRAM_HOSTS).optional(),
  discord: link(DISCORD_HOSTS).optional(),
  attributes: z.array(Attribute, { error: "must be an array" })
    .max(LIMITS.attributes, `at most ${LIMITS.attributes} items`)
    .optional(),
}, { error: "body must be a JSON object" });

export type MetadataRequest = z.output<typeof MetadataRequestSchema>;

const ONE_OF = "exactly one of imageUrl or imageBase64 is required";

/**
 * Parses and validates the body; throws one 400 naming every bad field. The one-of rule is checked
 * on the raw body, because zod skips object-level refinements once a member has failed. A hosted
 * document is what wallets show for a token, so its name and symbol obey the same well-known-names
 * rule as a build's (`wellKnown`).
 */
export function parseMetadataRequest(
  raw: unknown,
  wellKnown: WellKnownMatcher | null = null,
): MetadataRequest {
  const r = MetadataRequestSchema.safeParse(raw);
  const fields = r.success ? {} : zodFields(r.error);
  if (wellKnown && isObject(raw)) {
    for (const f of ["name", "symbol"] as const) {
      const value = raw[f];
      if ((f in fields && !isSymbolCharacterMessage(fields[f])) || typeof value !== "string") {
        continue;
      }
      const hit = wellKnown.match(value);
      if (hit) fields[f] = wellKnownMessage(hit);
    }
  }
  if (isObject(raw)) {
    const given = ["imageUrl", "imageBase64"].filter((k) => raw[k] !== undefined);
    if (given.length !== 1) {
      fields.imageUrl = ONE_OF;
      fields.imageBase64 = ONE_OF;
    }
  }
  if (!r.success || Object.keys(fields).length > 0) {
    throw new ApiError("invalid_request", "Request is invalid", fields);
  }
  return r.data;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
