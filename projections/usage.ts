/**
 * Daily usage per purchase. Limits belong to the purchase, not to one secret, so rotating or
 * deleting and re-creating a key cannot reset them.
 */
import type { DeclaredProjection } from "../events/projection.ts";

export interface UsageDoc {
  tokens: number;
  metadata: number;
}

export const usageProjection: DeclaredProjection<UsageDoc> = {
  name: "usage",
  handles: ["TokenBuilt", "MetadataHosted", "MetadataImageUnfetchable"],
  keysOf(e) {
    if (
      e.type === "TokenBuilt" || e.type === "MetadataHosted" ||
      e.type === "MetadataImageUnfetchable"
    ) {
      return [[e.data.purchaseId, e.data.day]];
    }
    return [];
  },
  evolve(doc, e) {
    const d = doc ?? { tokens: 0, metadata: 0 };
    if (e.type === "TokenBuilt") return { ...d, tokens: d.tokens + 1 };
    // A call whose image could not be fetched counts too: it was accepted and worked on.
    if (e.type === "MetadataHosted" || e.type === "MetadataImageUnfetchable") {
      return { ...d, metadata: d.metadata + 1 };
    }
    return doc;
  },
};

/** Hosted metadata documents per purchase, against the 5000-item cap. */
export const hostedCountProjection: DeclaredProjection<number> = {
  name: "hosted_count",
  handles: ["MetadataHosted"],
  keysOf: (e) => (e.type === "MetadataHosted" ? [[e.data.purchaseId]] : []),
  evolve: (doc, e) => (e.type === "MetadataHosted" ? (doc ?? 0) + 1 : doc),
};
