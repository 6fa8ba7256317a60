/** Reads of the build projection and its indexes (by message hash, mint, reference, signature). */
import type { Projection } from "../../events/projection.ts";
import {
  buildByMessageProjection,
  buildByMintProjection,
  buildByReferenceProjection,
  buildBySignatureProjection,
  type BuildDoc,
  buildsProjection,
} from "../../projections/builds.ts";
import { kvReads, read } from "../commands/read.ts";
import { tagBuild } from "../telemetry/tracing.ts";

export type BuildIndex =
  | "build_by_message"
  | "build_by_mint"
  | "build_by_reference"
  | "build_by_signature";

/** Each index's projection: its documents are build ids. */
export const BUILD_INDEXES: Record<BuildIndex, Projection<number>> = {
  build_by_message: buildByMessageProjection,
  build_by_mint: buildByMintProjection,
  build_by_reference: buildByReferenceProjection,
  build_by_signature: buildBySignatureProjection,
};

export async function buildById(kv: Deno.Kv, id: number | null): Promise<BuildDoc | null> {
  if (id === null) return null;
  // The request concerns this build from here on: its later spans carry the id.
  tagBuild(id);
  return await read(kvReads(kv), buildsProjection, [id]);
}

export async function buildBy(kv: Deno.Kv, index: BuildIndex, k: string): Promise<BuildDoc | null> {
  return buildById(kv, await read(kvReads(kv), BUILD_INDEXES[index], [k]));
}

/** The build only if the caller's key made it: another key's build reads as unknown. */
export async function ownBuildBy(
  kv: Deno.Kv,
  keyId: string,
  index: BuildIndex,
  k: string,
): Promise<BuildDoc | null> {
  const b = await buildBy(kv, index, k);
  return b && b.keyId === keyId ? b : null;
}
