/**
 * The display check's judgements, with no I/O: what a wallet or explorer makes of a metadata
 * document's bytes and headers, and of its image's bytes. display-check.ts fetches and stores.
 */
import type { DisplayCheck, Problem } from "./display-check-schema.ts";
import { inspectImage, NOT_AN_IMAGE } from "./image/sniff.ts";
import { verifyImage } from "./image/verify-image.ts";
import { decodeImage, type DecodeOptions } from "./image/decode-image.ts";

/** The Origin the document is asked for with, as Solana Explorer, a browser explorer, sends it. */
export const EXPLORER_ORIGIN = "https://explorer.solana.com";

export type Fields = NonNullable<DisplayCheck["document"]>;
export type ImageFacts = NonNullable<DisplayCheck["image"]>;

const problem = (code: Problem["code"], message: string): Problem => ({ code, message });

export function uriProblems(uri: string): Problem[] {
  return uri.startsWith("https://") ? [] : [
    problem("not_https", "The URI is not https: wallets and explorers load only https documents."),
  ];
}

/** CORS: explorers read the document from a browser page at their own origin. */
export function corsProblems(headers: Map<string, string[]>): Problem[] {
  const allowed = headers.get("access-control-allow-origin")?.[0]?.trim();
  if (allowed === "*" || allowed === EXPLORER_ORIGIN) return [];
  return [problem(
    "no_cors",
    allowed === undefined
      ? "The document is served without Access-Control-Allow-Origin: browser explorers cannot " +
        "read it and show the token without its name or logo."
      : `The document allows only the origin ${allowed.slice(0, 100)}: other browser explorers ` +
        "cannot read it.",
  )];
}

/** The fields wallets read, or the problem that there are none. */
export function readDocument(bytes: Uint8Array): { fields: Fields } | { problem: Problem } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return { problem: problem("not_json", 'The document is not JSON: wallets show "Unknown".') };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { problem: problem("not_json", "The document is JSON but not an object.") };
  }
  const o = parsed as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    fields: {
      name: text(o.name),
      symbol: text(o.symbol),
      description: text(o.description),
      image: text(o.image),
    },
  };
}

/** `name` / `symbol` different from the ones the token will carry, and a missing `image`. */
export function fieldProblems(fields: Fields, expected: { name?: string; symbol?: string }) {
  const out: Problem[] = [];
  for (const field of ["name", "symbol"] as const) {
    const want = expected[field];
    if (want === undefined || fields[field] === want) continue;
    out.push(problem(
      `${field}_mismatch`,
      `The document's ${field} is ${JSON.stringify(fields[field])}, not ` +
        `${JSON.stringify(want)}: wallets show one, explorers the other.`,
    ));
  }
  if (!fields.image) {
    out.push(problem("no_image", "The document has no `image` URL: wallets show no logo."));
  }
  return out;
}

/** A fetch failure of the image: too large, or unreachable. */
export function imageFetchProblem(reason: string): Problem {
  return /^image larger than/.test(reason)
    ? problem("image_too_large", `The image is too large: ${reason}.`)
    : problem("image_unreachable", `The image could not be fetched: ${reason}.`);
}

/**
 * The image's type, size and pixels, and whether it decodes (PNG, JPEG, WebP: as uploads are
 * checked; GIF: its header and trailer, not its frames).
 */
export async function judgeImage(
  uri: string,
  bytes: Uint8Array,
  bound: DecodeOptions,
): Promise<{ image: ImageFacts; problems: Problem[] }> {
  const facts = { uri, bytes: bytes.length };
  const gif = readGif(bytes);
  if (gif) {
    const image = { ...facts, type: "gif" as const, ...gif.size };
    return { image, problems: gif.whole ? [] : [undecodable("GIF ends before its trailer")] };
  }
  const inspected = inspectImage(bytes);
  if (!inspected.ok) {
    const image = { ...facts, type: null, width: null, height: null };
    if (inspected.reason !== NOT_AN_IMAGE) {
      return { image, problems: [undecodable(inspected.reason)] };
    }
    return { image, problems: [problem("image_unsupported", unsupported(bytes))] };
  }
  const { type, width, height } = inspected.image;
  const image = { ...facts, type, width, height };
  if (width > bound.maxWidth || height > bound.maxHeight) {
    const message = `The image is ${width}x${height} pixels; wallets may not decode more than ` +
      `${bound.maxWidth}x${bound.maxHeight}.`;
    return { image, problems: [problem("image_too_large", message)] };
  }
  const walked = verifyImage(bytes, inspected.image, bound);
  const decoded = walked.ok ? await decodeImage(bytes, inspected.image, bound) : walked;
  return { image, problems: decoded.ok ? [] : [undecodable(decoded.reason)] };
}

const undecodable = (reason: string) =>
  problem("image_undecodable", `The image does not decode: ${reason}; wallets show it broken.`);

function unsupported(bytes: Uint8Array): string {
  const head = new TextDecoder().decode(bytes.subarray(0, 1024)).toLowerCase();
  const kind = head.includes("<svg") ? "an SVG" : head.includes("<html") ? "an HTML page" : null;
  return `The image is ${kind ?? "not an image"}, not PNG, JPEG, WebP or GIF: ` +
    "many wallets do not show it.";
}

/** GIF87a / GIF89a: the logical screen size, and whether the file ends with its trailer. */
function readGif(b: Uint8Array) {
  const sig = String.fromCharCode(...b.subarray(0, 6));
  if (sig !== "GIF87a" && sig !== "GIF89a" || b.length < 10) return null;
  return {
    size: { width: b[6] | (b[7] << 8), height: b[8] | (b[9] << 8) },
    whole: b[b.length - 1] === 0x3b,
  };
}
