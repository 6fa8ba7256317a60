/**
 * POST /v1/metadata as one command: check the limits, get the image (decode or fetch), store its
 * chunks, then decide and commit the `MetadataHosted` event with the idempotency record in one
 * transaction. See docs/metadata.md for why the chunks go first.
 */
import { sha256Hex, toHex } from "../kernel/hashing.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { utcDay } from "../kernel/time.ts";
import type { Config } from "../config.ts";
import { type Rejection, toApiError } from "../kernel/rejection.ts";
import { ApiError } from "../kernel/errors.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import { kvReads } from "../commands/read.ts";
import type { Services } from "../services.ts";
import { blobKey, chunkCount, writeImageChunks } from "./blobs.ts";
import {
  checkLimits,
  decideHost,
  decideUnfetchable,
  type HostMetadata,
  type HostMetadataCallState,
  type HostMetadataCommand,
  type UnfetchableImage,
} from "./decide.ts";
import type { MetadataHosted, MetadataImageUnfetchable } from "../../events/types.ts";
import { imageManifestKey, loadHostMetadata, loadLimits, loadUnfetchable } from "./reads.ts";
import { buildMetadataJson, imageUri, metadataUri } from "./document.ts";
import type { MetadataRequest } from "./request.ts";
import { decodeBase64Image } from "./image/decode-base64.ts";
import {
  DEFAULT_TIMEOUT_MS,
  fetchImage,
  imageUrlProblem,
  type StartTimer,
} from "./image/fetch-image.ts";
import type { SniffedImage } from "./image/sniff.ts";
import { verifyImage } from "./image/verify-image.ts";
import { decodeImage } from "./image/decode-image.ts";

/**
 * Test-only settings a harness may put beside the real config. Production config never has them,
 * so the fetch budget there is the library's 10 s.
 */
export interface MetadataTestKnobs {
  imageFetchTimeoutMsForTests?: number;
  /** Decides when an image fetch's budget runs out, instead of the wall clock. */
  imageFetchTimerForTests?: StartTimer;
}

export interface HostedMetadataResponse {
  metadataUri: string;
  imageUri: string;
  id: string;
}

export interface HostMetadataInput {
  key: KeyDoc;
  idempotency: IdempotencyScope | null;
  requestId?: string;
  body: MetadataRequest;
}

/** POST /v1/metadata's command: the item hosted, its answer known before the commit. */
const hostCommand = (
  response: HostedMetadataResponse,
): CommandHandler<
  HostMetadata,
  HostMetadataCallState,
  MetadataHosted,
  LimitOrRejection,
  HostedMetadataResponse
> => ({
  load: loadHostMetadata,
  decide: decideHost,
  stream: (cmd) => `metadata-${cmd.id}`,
  expectedVersion: 0,
  respond: () => response,
  rejected: limitError,
});

/** A call whose image could not be used, counted with its 400 as the answer. */
const unfetchableCommand = (
  error: ApiError,
): CommandHandler<
  UnfetchableImage,
  HostMetadataCallState,
  MetadataImageUnfetchable,
  never,
  unknown
> => ({
  load: async (tx, cmd) => ({
    ...(await loadUnfetchable(tx, cmd)),
    hostedCount: null,
    image: null,
  }),
  decide: decideUnfetchable,
  stream: (cmd) => `metadata-${cmd.id}`,
  expectedVersion: 0,
  respond: () => error.body(),
});

export async function hostMetadata(
  s: Services,
  input: HostMetadataInput,
): Promise<HostedMetadataResponse> {
  const { key, idempotency } = input;
  const now = s.clock();
  const day = utcDay(now);
  const limits = {
    metadataPerDay: s.config.limits.metadataPerDay,
    hostedItemsPerKey: s.config.limits.hostedItemsPerKey,
  };

  // Cheap early refusal: an over-limit key must not make us download anything. The decision that
  // counts is the one inside the transaction below.
  const early = checkLimits({ now, limits }, await loadLimits(kvReads(s.kv), key.purchaseId, day));
  if (early) throw limitError(early);

  const id = toHex(crypto.getRandomValues(new Uint8Array(16)));
  const loaded = await loadImage(s, input);
  if (!loaded.ok) {
    if (loaded.counts) {
      await recordUnfetchable(s, input, { id, now, day, limits }, loaded.reason, loaded.error);
    }
    throw loaded.error;
  }
  const { bytes, image } = loaded;
  const imageId = await sha256Hex(bytes);
  const chunks = chunkCount(bytes.length);
  if (!(await imageBytesStored(s.kv, imageId, chunks))) {
    await writeImageChunks(s.kv, imageId, bytes);
  }

  // Hosted files are linked at their own origin when one is configured (HOSTED_BASE_URL).
  const base = s.config.hostedBaseUrl ?? s.config.publicBaseUrl;
  const response: HostedMetadataResponse = {
    metadataUri: metadataUri(base, id),
    imageUri: imageUri(base, imageId, image.ext),
    id,
  };
  const json = buildMetadataJson(input.body, { uri: response.imageUri, mime: image.mime });
  const cmd: HostMetadata = {
    id,
    keyId: key.keyId,
    purchaseId: key.purchaseId,
    authenticated: key,
    now,
    day,
    image: { imageId, ext: image.ext, mime: image.mime, bytes: bytes.length, chunks },
    json,
    limits,
  };

  await runCommand(hostCommand(response), cmd, {
    store: s.store,
    clock: s.clock,
    idempotency: { scope: idempotency, status: 201 },
  });
  return response;
}

/**
 * Whether this image's bytes are already stored whole: a manifest and its first and last chunks.
 * A manifest alone is not enough: a log restored with events:import has the manifests but not the
 * bytes, and posting the image again must repair them (they are content addressed, so writing
 * them again is harmless).
 */
async function imageBytesStored(kv: Deno.Kv, imageId: string, chunks: number): Promise<boolean> {
  const [manifest, first, last] = await kv.getMany([
    imageManifestKey(imageId),
    blobKey(imageId, 0),
    blobKey(imageId, chunks - 1),
  ]);
  return manifest.value !== null && first.value !== null && last.value !== null;
}

type LoadedImage =
  | { ok: true; bytes: Uint8Array; image: SniffedImage }
  /** `counts`: the call was worked on (a URL fetched) before it failed, so it counts. */
  | { ok: false; error: ApiError; reason: string; counts: boolean };

/** The image's bytes, which alone decide its type. Any failure is a 400 on the field given. */
async function loadImage(s: Services, input: HostMetadataInput): Promise<LoadedImage> {
  const maxBytes = s.config.limits.imageBytes;
  const { imageBase64, imageUrl } = input.body;
  if (imageBase64 !== undefined) {
    const r = decodeBase64Image(imageBase64, { maxBytes });
    if (r.ok) return await verified(s, r, "imageBase64", false);
    const error = new ApiError("invalid_request", "Image is invalid", { imageBase64: r.reason });
    return { ok: false, error, reason: r.reason, counts: false };
  }
  const allowLoopbackHttpForTests = s.config.allowLoopbackImageFetchForTests;
  // A URL that is no https URL at all is bad input, refused before any work: it does not count.
  const problem = imageUrlProblem(imageUrl!, { allowLoopbackHttpForTests });
  if (problem !== null) {
    const error = new ApiError("invalid_request", "Image could not be fetched", {
      imageUrl: problem,
    });
    return { ok: false, error, reason: problem, counts: false };
  }
  const knobs = s.config as Config & MetadataTestKnobs;
  const r = await fetchImage(imageUrl!, {
    maxBytes,
    timeoutMs: knobs.imageFetchTimeoutMsForTests ?? DEFAULT_TIMEOUT_MS,
    startTimer: knobs.imageFetchTimerForTests,
    allowLoopbackHttpForTests,
  });
  if (r.ok) return await verified(s, r, "imageUrl", true);
  s.logger.log("info", "image fetch refused", {
    requestId: input.requestId,
    reason: r.reason,
    detail: r.detail,
  });
  const error = new ApiError("invalid_request", "Image could not be fetched", {
    imageUrl: r.reason,
  });
  return { ok: false, error, reason: r.reason, counts: true };
}

/**
 * The image checked whole (structure to its end, nothing after it, the pixel bound), with its
 * privacy-leaking metadata stripped (src/metadata/image/verify-image.ts), and its pixels decoded
 * as a wallet would (decode-image.ts); the stripped bytes are the ones hosted. A refusal names the
 * field the image came in; a fetched one counts.
 */
async function verified(
  s: Services,
  loaded: { bytes: Uint8Array; image: SniffedImage },
  field: "imageBase64" | "imageUrl",
  counts: boolean,
): Promise<LoadedImage> {
  const bound = {
    maxWidth: s.config.limits.imageMaxWidth,
    maxHeight: s.config.limits.imageMaxHeight,
  };
  const refused = (reason: string): LoadedImage => {
    const error = new ApiError("invalid_request", "Image is invalid", { [field]: reason });
    return { ok: false, error, reason, counts };
  };
  const r = verifyImage(loaded.bytes, loaded.image, bound);
  if (!r.ok) return refused(r.reason);
  const decoded = await decodeImage(r.bytes, r.image, bound);
  if (!decoded.ok) return refused(decoded.reason);
  return { ok: true, bytes: r.bytes, image: r.image };
}

/**
 * Counts a call whose image URL could not be used (design.md: a metadata call counts once
 * accepted for processing), with its 400 as the idempotency record in the same commit, so a
 * retry under the same key replays the 400 and is not counted twice.
 */
async function recordUnfetchable(
  s: Services,
  input: HostMetadataInput,
  call: { id: string; now: number; day: string; limits: HostMetadataCommand["limits"] },
  reason: string,
  error: ApiError,
): Promise<void> {
  const { key, idempotency } = input;
  const cmd = { ...call, keyId: key.keyId, purchaseId: key.purchaseId, authenticated: key, reason };
  // Nothing decided (the key went, or the day's limit was reached): the middleware keeps the 400.
  await runCommand(unfetchableCommand(error), cmd, {
    store: s.store,
    clock: s.clock,
    idempotency: { scope: idempotency, status: error.status },
  });
}

/** A limit's refusal, with when it resets; any other refusal as the error it names. */
type LimitOrRejection = Rejection & { retryAfterS?: number };

function limitError(r: LimitOrRejection): ApiError {
  if (r.rejected !== "daily_limit") return toApiError(r);
  const headers: Record<string, string> = r.retryAfterS
    ? { "Retry-After": String(r.retryAfterS) }
    : {};
  return new ApiError(r.rejected, r.message, r.fields ?? {}, headers);
}
