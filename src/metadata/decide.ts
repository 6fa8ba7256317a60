/**
 * Whether a metadata item may be hosted, as a pure function of the command and the state read in
 * the same transaction. The clock comes in through the command.
 */
import type { MetadataHosted, MetadataImageUnfetchable } from "../../events/types.ts";
import type { HostedImageDoc } from "../../projections/hosted.ts";
import type { UsageDoc } from "../../projections/usage.ts";
import { type KeyDoc, stillInForce } from "../../projections/keys.ts";
import { isRejection, reject, type Rejection } from "../kernel/rejection.ts";
import { hostedItemsPerKey, type LimitRejection, metadataPerDay } from "./metadata-limits.ts";

export interface HostMetadataCommand {
  id: string;
  keyId: string;
  purchaseId: string;
  /** Milliseconds since the epoch, UTC: the moment the request was accepted. */
  now: number;
  /** UTC day (YYYY-MM-DD) of `now`. */
  day: string;
  image: {
    imageId: string;
    ext: "png" | "jpg" | "webp";
    mime: string;
    bytes: number;
    chunks: number;
  };
  json: string;
  limits: { metadataPerDay: number; hostedItemsPerKey: number };
}

export interface HostMetadataState {
  /** `usage` projection for [purchaseId, day]. */
  usage: UsageDoc | null;
  /** `hosted_count` projection for the purchase. */
  hostedCount: number | null;
  /** The image manifest, if this image is already hosted (by anyone). */
  image: HostedImageDoc | null;
}

/** The limits alone: also run before the image is fetched, so a refused call costs no download. */
export function checkLimits(
  cmd: Pick<HostMetadataCommand, "now" | "limits">,
  state: Pick<HostMetadataState, "usage" | "hostedCount">,
): LimitRejection | null {
  if (metadataPerDay.reached(cmd.limits, state.usage)) {
    return metadataPerDay.rejection(cmd.limits, cmd.now);
  }
  if (hostedItemsPerKey.reached(cmd.limits, state.hostedCount)) {
    return hostedItemsPerKey.rejection(cmd.limits);
  }
  return null;
}

export function decideHostMetadata(
  cmd: HostMetadataCommand,
  state: HostMetadataState,
): MetadataHosted | LimitRejection {
  const refused = checkLimits(cmd, state);
  if (refused) return refused;
  return {
    type: "MetadataHosted",
    v: 1,
    data: {
      id: cmd.id,
      keyId: cmd.keyId,
      purchaseId: cmd.purchaseId,
      day: cmd.day,
      imageId: cmd.image.imageId,
      imageExt: cmd.image.ext,
      imageMime: cmd.image.mime,
      imageBytes: cmd.image.bytes,
      imageChunks: cmd.image.chunks,
      newImage: state.image === null,
      json: cmd.json,
    },
  };
}

/**
 * A call whose image URL could not be used still counts, unless the day's limit was reached in
 * the meantime (then the call would have been refused, and counting it would pass the limit).
 */
export function decideUnfetchableImage(
  cmd: Pick<HostMetadataCommand, "id" | "keyId" | "purchaseId" | "now" | "day" | "limits">,
  state: Pick<HostMetadataState, "usage">,
  reason: string,
): MetadataImageUnfetchable[] {
  if (metadataPerDay.reached(cmd.limits, state.usage)) return [];
  const { id, keyId, purchaseId, day } = cmd;
  return [{ type: "MetadataImageUnfetchable", v: 1, data: { id, keyId, purchaseId, day, reason } }];
}

/** What the runner runs: the command, with the key the call was authenticated with. */
export interface HostMetadata extends HostMetadataCommand {
  authenticated: Pick<KeyDoc, "secretMac">;
}

export interface HostMetadataCallState extends HostMetadataState {
  /** The caller's key as it is now. */
  key: KeyDoc | null;
}

/** A ban, deletion or rotation that landed while the image was fetched wins over the call. */
export const keyNoLongerInForce = () => reject("unauthorized", "The API key is no longer valid");

export function decideHost(
  cmd: HostMetadata,
  state: HostMetadataCallState,
): MetadataHosted[] | LimitRejection | Rejection {
  if (!stillInForce(state.key, cmd.authenticated)) return keyNoLongerInForce();
  const decided = decideHostMetadata(cmd, state);
  return isRejection(decided) ? decided : [decided];
}

export interface UnfetchableImage
  extends Pick<HostMetadataCommand, "id" | "keyId" | "purchaseId" | "now" | "day" | "limits"> {
  authenticated: Pick<KeyDoc, "secretMac">;
  reason: string;
}

/** The unusable image's call counts only while the key is still in force. */
export function decideUnfetchable(
  cmd: UnfetchableImage,
  state: Pick<HostMetadataCallState, "usage" | "key">,
): MetadataImageUnfetchable[] {
  if (!stillInForce(state.key, cmd.authenticated)) return [];
  return decideUnfetchableImage(cmd, state, cmd.reason);
}
