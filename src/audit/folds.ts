/**
 * Folds only the audit needs. Unlike `buildsProjection`, which ignores an outcome for a build it
 * never saw, these keep such orphans (a creation confirmed with no matching TokenBuilt is exactly
 * what an auditor must see) and note every oddity on the way.
 */
import type { BuildStatus } from "../../projections/builds.ts";
import { FINAL_STATUSES } from "../../projections/builds.ts";
import type { Projection } from "../../events/projection.ts";
import { isBuildEvent } from "../../events/event-types.ts";

export interface AuditBuildDoc {
  buildId: number;
  /** False when outcome events name a build that no TokenBuilt created. */
  hasBuild: boolean;
  keyId: string | null;
  purchaseId: string | null;
  /** UTC day the build counted against (from TokenBuilt). */
  day: string | null;
  mint: string;
  name: string | null;
  symbol: string | null;
  payer: string | null;
  treasury: string | null;
  quotedLamports: string | null;
  feeUsd: number | null;
  solUsd: number | null;
  status: BuildStatus;
  signature: string | null;
  feeSeenLamports: string | null;
  supplyRaw: string | null;
  supplySeen: string | null;
  problems: string[];
  /** Ms since epoch of TokenBuilt, and of the outcome (confirmed/failed/unverified/expired). */
  builtAt: number | null;
  outcomeAt: number | null;
  /** Oddities in the event history of this build, each a short sentence. */
  anomalies: string[];
}

export const AUDIT_BUILD = "audit_build";

const orphan = (buildId: number, mint: string): AuditBuildDoc => ({
  buildId,
  hasBuild: false,
  keyId: null,
  purchaseId: null,
  day: null,
  mint,
  name: null,
  symbol: null,
  payer: null,
  treasury: null,
  quotedLamports: null,
  feeUsd: null,
  solUsd: null,
  status: "submitted",
  signature: null,
  feeSeenLamports: null,
  supplyRaw: null,
  supplySeen: null,
  problems: [],
  builtAt: null,
  outcomeAt: null,
  anomalies: [],
});

export const auditBuildProjection: Projection<AuditBuildDoc> = {
  name: AUDIT_BUILD,
  settled: (doc) => FINAL_STATUSES.includes(doc.status),
  keysOf(e) {
    return isBuildEvent(e) ? [[e.data.buildId]] : [];
  },
  evolve(doc, e) {
    if (e.type === "TokenBuilt") {
      const d = e.data;
      const anomalies = doc
        ? [...doc.anomalies, `TokenBuilt repeated at position ${e.position}`]
        : [];
      return {
        ...(doc ?? orphan(d.buildId, d.mint)),
        hasBuild: true,
        keyId: d.keyId,
        purchaseId: d.purchaseId,
        day: d.day,
        mint: d.mint,
        name: d.name,
        symbol: d.symbol,
        payer: d.payer,
        treasury: d.treasury,
        quotedLamports: d.feeLamports,
        feeUsd: d.feeUsd,
        solUsd: d.solUsd,
        status: doc?.status ?? "built",
        supplyRaw: d.supplyRaw,
        builtAt: e.at,
        anomalies,
      };
    }
    if (e.type === "BuildRefreshed") {
      // The lowest fee issued is what a landing must pay; an expired build is open again.
      if (!doc || !["built", "submitted", "expired"].includes(doc.status)) return doc;
      const quoted = doc.quotedLamports === null ? null : BigInt(doc.quotedLamports);
      const fee = BigInt(e.data.feeLamports);
      return {
        ...doc,
        status: doc.status === "expired" ? "built" : doc.status,
        quotedLamports: (quoted === null || fee < quoted ? fee : quoted).toString(),
        outcomeAt: doc.status === "expired" ? null : doc.outcomeAt,
      };
    }
    if (!("buildId" in e.data) || !("mint" in e.data)) return doc;
    let d = doc ?? orphan(e.data.buildId, e.data.mint);
    if (d.hasBuild && e.data.mint !== d.mint) {
      d = { ...d, anomalies: [...d.anomalies, `${e.type} names mint ${e.data.mint}`] };
    }
    const final = FINAL_STATUSES.includes(d.status);
    const outcome = (next: Partial<AuditBuildDoc>): AuditBuildDoc => ({
      ...d,
      ...next,
      outcomeAt: e.at,
      anomalies: final
        ? [...d.anomalies, `${e.type} after the build was already ${d.status}`]
        : d.anomalies,
    });
    switch (e.type) {
      case "TransactionSubmitted":
        return final ? d : { ...d, status: "submitted", signature: e.data.signature };
      case "CreationConfirmed":
        return outcome({
          status: "confirmed",
          signature: e.data.signature,
          feeSeenLamports: e.data.feeLamportsSeen,
          supplySeen: e.data.supplyRaw,
          problems: [],
        });
      case "CreationUnverified":
        return outcome({
          status: "unverified",
          keyId: d.keyId ?? e.data.keyId,
          signature: e.data.signature,
          feeSeenLamports: e.data.feeLamportsSeen,
          supplySeen: e.data.supplyRawSeen,
          problems: e.data.problems,
        });
      case "CreationFailed":
        return outcome({
          status: "failed",
          signature: e.data.signature ?? d.signature,
          problems: [e.data.reason],
        });
      case "BuildExpired":
        return outcome({ status: "expired" });
      default:
        return d;
    }
  },
};
