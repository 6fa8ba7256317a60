/**
 * The read models metadata decisions use: the day's usage and the hosted count of the purchase,
 * the image's manifest (already hosted by anyone?), and the key the call was authenticated with.
 */
import type { Tx } from "../../events/store.ts";
import { hostedImageProjection } from "../../projections/hosted.ts";
import { keysProjection } from "../../projections/keys.ts";
import { hostedCountProjection, usageProjection } from "../../projections/usage.ts";
import { keyOf, readMany, type ReadTx } from "../commands/read.ts";
import type { HostMetadata, HostMetadataCallState, UnfetchableImage } from "./decide.ts";

export const usageKey = (purchaseId: string, day: string) =>
  keyOf(usageProjection, [purchaseId, day]);
export const hostedCountKey = (purchaseId: string) => keyOf(hostedCountProjection, [purchaseId]);
export const imageManifestKey = (imageId: string) => keyOf(hostedImageProjection, [imageId]);

/** The limits' state alone: read before the image is fetched, for the cheap early refusal. */
export async function loadLimits(tx: ReadTx, purchaseId: string, day: string) {
  const [usage, hostedCount] = await readMany(
    tx,
    [
      [usageProjection, [purchaseId, day]],
      [hostedCountProjection, [purchaseId]],
    ] as const,
  );
  return { usage, hostedCount };
}

export async function loadHostMetadata(tx: Tx, cmd: HostMetadata): Promise<HostMetadataCallState> {
  const [usage, hostedCount, image, key] = await readMany(
    tx,
    [
      [usageProjection, [cmd.purchaseId, cmd.day]],
      [hostedCountProjection, [cmd.purchaseId]],
      [hostedImageProjection, [cmd.image.imageId]],
      [keysProjection, [cmd.keyId]],
    ] as const,
  );
  return { usage, hostedCount, image, key };
}

export async function loadUnfetchable(
  tx: Tx,
  cmd: UnfetchableImage,
): Promise<Pick<HostMetadataCallState, "usage" | "key">> {
  const [usage, key] = await readMany(
    tx,
    [
      [usageProjection, [cmd.purchaseId, cmd.day]],
      [keysProjection, [cmd.keyId]],
    ] as const,
  );
  return { usage, key };
}
