/**
 * POST /v1/metadata/check, the shell around display-judge.ts: fetch the document and its image
 * through the pinned, SSRF-safe fetcher the image upload uses (image/fetch-image.ts), or read them
 * from the store for a document we host, then keep the answer for a few minutes so that a build
 * on the same URI can say what was found (`recentCheck`).
 *
 * The kept answer is a KV entry with expireIn, keyed by the URI's SHA-256, not an event: it is a
 * cache of what a third-party server answered a moment ago, no fact of ours; replaying the log
 * must not bring back a verdict about a document that may have changed since.
 *
 * Bounded: the document at most 64 KiB and 5 s, the image at most the upload limit
 * (IMAGE_MAX_BYTES) and 10 s, then decoded as an upload is (docs/metadata.md).
 */
import type { Config } from "../config.ts";
import type { Services } from "../services.ts";
import { sha256Hex } from "../kernel/hashing.ts";
import { kvReads, read } from "../commands/read.ts";
import { hostedImageProjection, hostedMetadataProjection } from "../../projections/hosted.ts";
import { readImage } from "./blobs.ts";
import { hostedMetadataId } from "./document.ts";
import { DEFAULT_TIMEOUT_MS, type FetchImageOptions, fetchResource } from "./image/fetch-image.ts";
import type { DisplayCheck, DisplayCheckRequest, Problem } from "./display-check-schema.ts";
import type { MetadataTestKnobs } from "./handle.ts";
import {
  corsProblems,
  EXPLORER_ORIGIN,
  fieldProblems,
  type Fields,
  type ImageFacts,
  imageFetchProblem,
  judgeImage,
  readDocument,
  uriProblems,
} from "./display-judge.ts";

export const DOCUMENT_MAX_BYTES = 64 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5_000;
/** How long a check's answer is kept for a build on the same URI. */
export const CHECK_KEPT_MS = 10 * 60_000;

const checkKey = async (
  uri: string,
): Promise<Deno.KvKey> => ["display-check", await sha256Hex(uri)];

/** The check of `uri` made in the last CHECK_KEPT_MS, or null: a KV read, never a fetch. */
export async function recentCheck(
  kv: Deno.Kv,
  uri: string,
  now: number,
): Promise<DisplayCheck | null> {
  const entry = await kv.get<DisplayCheck>(await checkKey(uri));
  const check = entry.value;
  if (!check || check.metadataUri !== uri) return null;
  const age = now - Date.parse(check.checkedAt);
  return age >= 0 && age <= CHECK_KEPT_MS ? check : null;
}

export async function checkDisplay(s: Services, req: DisplayCheckRequest): Promise<DisplayCheck> {
  const uri = req.metadataUri;
  const hosted = hostedId(s.config, uri);
  const found = hosted !== null ? await fromStore(s, hosted) : await fetched(s, uri);
  const problems = [...uriProblems(uri), ...found.problems];
  if (found.fields) problems.push(...fieldProblems(found.fields, req));
  problems.push(...found.imageProblems);
  const check: DisplayCheck = {
    metadataUri: uri,
    checkedAt: new Date(s.clock()).toISOString(),
    hosted: hosted !== null,
    ok: problems.length === 0,
    document: found.fields,
    image: found.image,
    problems,
  };
  await s.kv.set(await checkKey(uri), check, { expireIn: CHECK_KEPT_MS });
  return check;
}

function hostedId(config: Config, uri: string): string | null {
  const bases = [config.hostedBaseUrl, config.publicBaseUrl].filter((b): b is string => !!b);
  for (const base of bases) {
    const id = hostedMetadataId(base, uri);
    if (id !== null) return id;
  }
  return null;
}

interface Found {
  problems: Problem[];
  fields: Fields | null;
  image: ImageFacts | null;
  imageProblems: Problem[];
}

const nothing = (p: Problem): Found => ({
  problems: [p],
  fields: null,
  image: null,
  imageProblems: [],
});

const bound = (s: Services) => ({
  maxWidth: s.config.limits.imageMaxWidth,
  maxHeight: s.config.limits.imageMaxHeight,
});

/** Our own document: the store holds it and its image, served with `*` CORS (routes/hosted.ts). */
async function fromStore(s: Services, id: string): Promise<Found> {
  const doc = await read(kvReads(s.kv), hostedMetadataProjection, [id]);
  if (!doc) return nothing({ code: "unreachable", message: "No document is hosted at this URI." });
  const parsed = readDocument(new TextEncoder().encode(doc.json));
  if ("problem" in parsed) return nothing(parsed.problem);
  const manifest = await read(kvReads(s.kv), hostedImageProjection, [doc.imageId]);
  if (!manifest || !parsed.fields.image) {
    return { ...nothing(imageFetchProblem("it is not in the store")), fields: parsed.fields };
  }
  const bytes = await readImage(s.kv, manifest);
  const judged = await judgeImage(parsed.fields.image, bytes, bound(s));
  return {
    problems: [],
    fields: parsed.fields,
    image: judged.image,
    imageProblems: judged.problems,
  };
}

function fetchOptions(s: Services): FetchImageOptions {
  const knobs = s.config as Config & MetadataTestKnobs;
  return {
    timeoutMs: knobs.imageFetchTimeoutMsForTests ?? DEFAULT_TIMEOUT_MS,
    startTimer: knobs.imageFetchTimerForTests,
    allowLoopbackHttpForTests: s.config.allowLoopbackImageFetchForTests,
  };
}

async function fetched(s: Services, uri: string): Promise<Found> {
  const options = fetchOptions(s);
  const document = await fetchResource(
    uri,
    { accept: "application/json", what: "document", origin: EXPLORER_ORIGIN },
    {
      ...options,
      maxBytes: DOCUMENT_MAX_BYTES,
      timeoutMs: Math.min(options.timeoutMs!, DOCUMENT_TIMEOUT_MS),
    },
  );
  if (!document.ok) {
    return nothing({
      code: "unreachable",
      message: `The document could not be fetched: ${document.reason}.`,
    });
  }
  const problems = corsProblems(document.headers);
  const parsed = readDocument(document.bytes);
  if ("problem" in parsed) {
    return { ...nothing(parsed.problem), problems: [...problems, parsed.problem] };
  }
  const found: Found = { problems, fields: parsed.fields, image: null, imageProblems: [] };
  if (!parsed.fields.image) return found;
  const image = await fetchResource(
    parsed.fields.image,
    { accept: "image/png,image/jpeg,image/webp,image/gif", what: "image" },
    { ...options, maxBytes: s.config.limits.imageBytes },
  );
  if (!image.ok) return { ...found, imageProblems: [imageFetchProblem(image.reason)] };
  const judged = await judgeImage(parsed.fields.image, image.bytes, bound(s));
  return { ...found, image: judged.image, imageProblems: judged.problems };
}
