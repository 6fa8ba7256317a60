/**
 * Token updates: each update's record (built -> landed | failed), and each token's current state
 * after the updates that landed, keyed by its build (GET /v1/tokens/{mint} shows it as
 * `current`). Folds of the update events; replay rebuilds them exactly.
 */
import { UPDATE_EVENT_TYPES } from "../events/event-types.ts";
import type { DeclaredProjection } from "../events/projection.ts";
import type { TokenUpdateBuiltData, TokenView } from "../events/token-update.ts";

/** submitted: the relay sent it, its outcome not seen yet. */
export type UpdateStatus = "built" | "submitted" | "landed" | "failed";

/** An update that may still land: an outcome is recorded only for one. */
export const updateIsOpen = (d: { status: UpdateStatus }) =>
  d.status === "built" || d.status === "submitted";

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
    e.type === "TokenUpdateBuilt" || e.type === "TokenUpdateSubmitted" ||
      e.type === "TokenUpdateLanded" || e.type === "TokenUpdateFailed"
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
    if (!doc || !updateIsOpen(doc)) return doc;
    if (e.type === "TokenUpdateSubmitted") {
      return { ...doc, status: "submitted", signature: e.data.signature };
    }
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

/** The message hash issued for an update finds it: the relay matches a signed update by it. */
export const updateByMessageProjection: DeclaredProjection<string> = {
  name: "update_by_message",
  handles: ["TokenUpdateBuilt"],
  keysOf: (e) => (e.type === "TokenUpdateBuilt" ? [[e.data.messageHash]] : []),
  evolve: (doc, e) => (e.type === "TokenUpdateBuilt" ? e.data.updateId : doc),
};

/** A token's state after its landed updates. */
export interface TokenCurrentDoc extends TokenView {
  /** How many updates landed, and the last one (its id, Unix seconds). */
  updates: number;
  lastUpdateId: string;
  updatedAt: number;
  /** The slot that last set each field: a landing verified late does not undo a later one. */
  fieldSlots: Partial<Record<keyof TokenView, number>>;
  /** The latest slot of a landed update. */
  lastSlot: number;
}

export const tokenCurrentProjection: DeclaredProjection<TokenCurrentDoc> = {
  name: "token_current",
  handles: ["TokenUpdateLanded"],
  keysOf: (e) => (e.type === "TokenUpdateLanded" ? [[e.data.buildId]] : []),
  evolve(doc, e) {
    if (e.type !== "TokenUpdateLanded") return doc;
    const d = e.data;
    const view: TokenView = doc ?? d.after;
    const next: Record<string, unknown> = { ...pickView(view) };
    const fieldSlots: Partial<Record<keyof TokenView, number>> = { ...doc?.fieldSlots };
    for (const [k, v] of Object.entries(d.set) as [keyof TokenView, unknown][]) {
      if ((fieldSlots[k] ?? -1) > d.slot) continue;
      next[k] = v;
      fieldSlots[k] = d.slot;
    }
    const latest = !doc || (doc.lastSlot ?? -1) <= d.slot;
    return {
      ...(next as unknown as TokenView),
      updates: (doc?.updates ?? 0) + 1,
      lastUpdateId: latest ? d.updateId : doc!.lastUpdateId,
      updatedAt: latest ? d.blockTime ?? seconds(e.at) : doc!.updatedAt,
      fieldSlots,
      lastSlot: Math.max(d.slot, doc?.lastSlot ?? -1),
    };
  },
};

const VIEW_KEYS = [
  "name",
  "symbol",
  "uri",
  "updateAuthority",
  "isMutable",
  "mintAuthority",
  "freezeAuthority",
] as const satisfies readonly (keyof TokenView)[];

const pickView = (v: TokenView): TokenView =>
  Object.fromEntries(VIEW_KEYS.map((k) => [k, v[k]])) as unknown as TokenView;
