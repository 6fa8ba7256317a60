/**
 * The POST /v1/metadata body: a strict schema (unknown members are refused) and a parse that names
 * every bad field at once, the imageUrl / imageBase64 one-of included.
 */
import { INVISIBLE_FORMAT, INVISIBLE_FORMAT_MESSAGE } from "../domain/invisible-text.ts";
import { z } from "zod";
import { zodFields } from "../http/body.ts";
import { ApiError } from "../http/errors.ts";

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

const str = (what = "a string") =>
  z.string({ error: (i) => (i.input === undefined ? "required" : `must be ${what}`) });

// Control characters render as nothing or break layouts in wallets; newlines make sense only in
// the description.
const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_NEWLINES = /[^\P{Cc}\n\r\t]/u;

const text = (max: number, opts: { multiline?: boolean; required?: boolean } = {}) =>
  str()
    .refine((s) => !opts.required || s.trim() !== "", "must not be empty")
    .refine((s) => chars(s) <= max, `at most ${max} characters`)
    .refine(
      (s) => !(opts.multiline ? CONTROL_BUT_NEWLINES : CONTROL).test(s),
      "must not contain control characters",
    );

function httpsUrl(s: string): URL | null {
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
    .transform((s) => new URL(s).href);
};

export const TWITTER_HOSTS = ["x.com", "www.x.com", "twitter.com", "www.twitter.com"] as const;
export const TELEGRAM_HOSTS = ["t.me"] as const;
export const DISCORD_HOSTS = ["discord.gg", "discord.com", "www.discord.com"] as const;

const Attribute = z.strictObject({
  trait_type: text(LIMITS.traitType, { required: true }),
  value: z.union([
    z.string().refine(
      (s) => chars(s) <= LIMITS.attributeValue,
      `at most ${LIMITS.attributeValue} characters`,
    ),
    z.number(),
  ], {
    error: (i) => i.input === undefined ? "required" : "must be a string or a finite number",
  }),
}, { error: "must be an object {trait_type, value}" });

export const MetadataRequestSchema = z.strictObject({
  name: text(LIMITS.name, { required: true })
    .refine((s) => !INVISIBLE_FORMAT.test(s), INVISIBLE_FORMAT_MESSAGE),
  symbol: str()
    .refine((s) => s.length > 0, "must not be empty")
    .refine((s) => chars(s) <= LIMITS.symbol, `at most ${LIMITS.symbol} characters`)
    .refine((s) => !/\s/.test(s), "must not contain spaces")
    .refine((s) => !CONTROL.test(s), "must not contain control characters")
    .refine((s) => !INVISIBLE_FORMAT.test(s), INVISIBLE_FORMAT_MESSAGE),
  description: text(LIMITS.description, { multiline: true }).optional(),
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
 * on the raw body, because zod skips object-level refinements once a member has failed.
 */
export function parseMetadataRequest(raw: unknown): MetadataRequest {
  const r = MetadataRequestSchema.safeParse(raw);
  const fields = r.success ? {} : zodFields(r.error);
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
