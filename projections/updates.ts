/**
 * Token updates: each update's record (built -> landed | failed), and each token's current state
 * after the updates that landed, keyed by its build (GET /v1/tokens/{mint} shows it as
 * `current`). Folds of the update events; replay rebuilds them exactly.
 */
import { UPDATE_EVENT_TYPES } from "../events/event-types.ts";
import type { DeclaredProjection } from "../events/projection.ts";
import type { TokenUpdateBuiltData, TokenView } from "../events/token-update.ts";

export type UpdateStatus = "built" | "landed" | "failed";

export type UpdateDoc = TokenUpdateBuiltData & {
  status: UpdateStatus;
  signature: string | null;
  slot: number | null;
  feeLamportsSeen: string | null;
  reason: string | null;
  /** Unix seconds. */
  createdAt: number;
  landedAt: number | null;
};

const seconds = (ms: number) => Math.floor(ms / 1000);

export const updatesProjection: DeclaredProjection<UpdateDoc> = {
  name: "token_update",
  handles: UPDATE_EVENT_TYPES,
  keysOf: (e) =>
    e.type === "TokenUpdateBuilt" || e.type === "TokenUpdateLanded" ||
      e.type === "TokenUpdateFailed"
      ? [[e.data.updateId]]
      : [],
  evolve(doc, e) {
    if (e.type === "TokenUpdateBuilt") {
      return {
        ...e.data,
        status: "built",
        signature: null,
        slot: null,
        feeLamportsSeen: null,
        reason: null,
        createdAt: seconds(e.at),
        landedAt: null,
      };
    }
    // An outcome is recorded once: a late report never moves a final record.
    if (!doc || doc.status !== "built") return doc;
    if (e.type === "TokenUpdateLanded") {
      return {
        ...doc,
        status: "landed",
        signature: e.data.signature,
        slot: e.data.slot,
        feeLamportsSeen: e.data.feeLamportsSeen,
        after: e.data.after,
        landedAt: e.data.blockTime ?? seconds(e.at),
      };
    }
    if (e.type === "TokenUpdateFailed") {
      return { ...doc, status: "failed", signature: e.data.signature, reason: e.data.reason };
    }
    return doc;
  },
};

/** A token's state after its landed updates. */
export interface TokenCurrentDoc extends TokenView {
  /** How many updates landed, and the last one (its id, Unix seconds). */
  updates: number;
  lastUpdateId: string;
  updatedAt: number;
}

export const tokenCurrentProjection: DeclaredProjection<TokenCurrentDoc> = {
  name: "token_current",
  handles: ["TokenUpdateLanded"],
  keysOf: (e) => (e.type === "TokenUpdateLanded" ? [[e.data.buildId]] : []),
  evolve(doc, e) {
    if (e.type !== "TokenUpdateLanded") return doc;
    return {
      ...e.data.after,
      updates: (doc?.updates ?? 0) + 1,
      lastUpdateId: e.data.updateId,
      updatedAt: e.data.blockTime ?? seconds(e.at),
    };
  },
};
