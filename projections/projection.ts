// The interface lives beside the store (events/projection.ts), which folds projections inline
// and must not import from projections/; every projection keeps importing it from here.
export type { DeclaredProjection, Projection } from "../events/projection.ts";
