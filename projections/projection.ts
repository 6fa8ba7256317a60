// The interface lives beside the store (events/projection.ts), which folds projections inline
// and must not import from projections/. This pass-through remains only for the replay and audit
// files being rewritten on another branch (projections/replay.ts, live-cut.ts, digest-fold.ts,
// src/audit/*); delete it once they import events/projection.ts (the architecture test lists it).
export type { DeclaredProjection, Projection } from "../events/projection.ts";
