/**
 * Each key's builds in order, for `GET /v1/tokens`: one row per build at [keyId, buildId], so a
 * reverse range read lists a key's builds newest first without reading the log. Build ids are
 * allocated under the log head's guard, so a later build always has a larger id: a cursor at an
 * id stays a stable position however many builds land meanwhile. Status lives on the build
 * record (the lifecycle events do not name the key), read with the row.
 */
import type { DeclaredProjection } from "../events/projection.ts";

export const buildsByKeyProjection: DeclaredProjection<number> = {
  name: "build_by_key",
  handles: ["TokenBuilt"],
  keysOf: (e) => e.type === "TokenBuilt" ? [[e.data.keyId, e.data.buildId]] : [],
  evolve: (doc, e) => e.type === "TokenBuilt" ? e.data.buildId : doc,
};
