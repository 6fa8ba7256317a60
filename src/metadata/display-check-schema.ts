/**
 * POST /v1/metadata/check: its request, its answer and the problem codes, one shape for the
 * handler, the OpenAPI document and the build's `displayCheck` (see display-check.ts).
 */
import { z } from "zod";

function isWebUrl(text: string): boolean {
  try {
    return ["https:", "http:"].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

// The messages the other bodies give ("required", "at most N characters"), not zod's defaults.
const text = (max: number) =>
  z.string({ error: (i) => (i.input === undefined ? "required" : "must be a string") })
    .max(max, `at most ${max} characters`);

export const DisplayCheckRequest = z.strictObject({
  metadataUri: text(2048).refine(isWebUrl, "must be an http(s) URL").describe(
    "the metadata JSON URL a token will carry on chain: http(s); an http one is checked and " +
      "reported as not_https",
  ),
  name: text(200).optional().describe(
    "the name the token will have on chain; a different `name` in the JSON is a problem",
  ),
  symbol: text(50).optional().describe(
    "the symbol the token will have on chain; a different `symbol` in the JSON is a problem",
  ),
});
export type DisplayCheckRequest = z.infer<typeof DisplayCheckRequest>;

export const PROBLEM_CODES = [
  "not_https",
  "unreachable",
  "not_json",
  "no_cors",
  "no_image",
  "name_mismatch",
  "symbol_mismatch",
  "image_unreachable",
  "image_unsupported",
  "image_too_large",
  "image_undecodable",
] as const;
export type ProblemCode = typeof PROBLEM_CODES[number];

export const Problem = z.object({
  code: z.enum(PROBLEM_CODES).describe(
    "not_https: wallets and explorers only load https; unreachable: the document could not be " +
      "fetched; not_json: it is not a JSON object; no_cors: no Access-Control-Allow-Origin " +
      "for browser explorers; no_image: no `image` string; name_mismatch / symbol_mismatch: " +
      "differs from the one given; image_unreachable: the image could not be fetched; " +
      "image_unsupported: not PNG, JPEG, WebP or GIF (e.g. SVG); image_too_large: more bytes " +
      "or pixels than the limits; image_undecodable: its pixel data does not decode",
  ),
  message: z.string().describe("one sentence for a person"),
});
export type Problem = z.infer<typeof Problem>;

export const DisplayCheck = z.object({
  metadataUri: z.string(),
  checkedAt: z.string().describe("ISO 8601 time of the check"),
  hosted: z.boolean().describe("true for a document this service hosts, answered from its store"),
  ok: z.boolean().describe("true when there are no problems"),
  document: z.object({
    name: z.string().nullable(),
    symbol: z.string().nullable(),
    description: z.string().nullable(),
    image: z.string().nullable(),
  }).nullable().describe("the fields wallets show, as parsed; null when there is no JSON object"),
  image: z.object({
    uri: z.string(),
    type: z.enum(["png", "jpeg", "webp", "gif"]).nullable().describe(
      "null when the bytes are none of the four",
    ),
    bytes: z.number().int(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
  }).nullable().describe("the image as fetched; null when it could not be fetched"),
  problems: z.array(Problem),
}).describe("What a wallet and an explorer will show for a metadata URI");
export type DisplayCheck = z.infer<typeof DisplayCheck>;
