/** Reads of the build projection and its indexes (by message hash, mint, reference, signature). */
import { projectionKey } from "../../events/keys.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import { tagBuild } from "../telemetry/tracing.ts";

export type BuildIndex =
  | "build_by_message"
  | "build_by_mint"
  | "build_by_reference"
  | "build_by_signature";

export async function buildById(kv: Deno.Kv, id: number | null): Promise<BuildDoc | null> {
  if (id === null) return null;
  // The request concerns this build from here on: its later spans carry the id.
  tagBuild(id);
  return (await kv.get<BuildDoc>(projectionKey("build", [id]))).value;
}

export async function buildBy(kv: Deno.Kv, index: BuildIndex, k: string): Promise<BuildDoc | null> {
  return buildById(kv, (await kv.get<number>(projectionKey(index, [k]))).value);
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
