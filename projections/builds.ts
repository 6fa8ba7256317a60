/**
 * Build records and the lifecycle of each creation:
 * built -> submitted -> confirmed | failed | unverified, and built/submitted -> expired.
 */
import type { BuildRefreshed, EventType, StoredEvent } from "../events/types.ts";
import { BUILD_EVENT_TYPES, isBuildEvent } from "../events/event-types.ts";
import type { DeclaredProjection } from "../events/projection.ts";
import { type KeptField, keptOf, type TokenBuiltData } from "../events/token-built.ts";

export type BuildStatus = "built" | "submitted" | "confirmed" | "failed" | "unverified" | "expired";
export const FINAL_STATUSES: BuildStatus[] = ["confirmed", "failed", "unverified", "expired"];

/** The build as recorded (the event fields `KEPT` names), then its lifecycle. */
export type BuildDoc = Pick<TokenBuiltData, KeptField> & BuildLifecycle;

export interface BuildLifecycle {
  status: BuildStatus;
  signature: string | null;
  feeVerified: boolean;
  feeLamportsSeen: string | null;
  supplyRawSeen: string | null;
  /** From the landed transaction; null until one is read (or for records from before). */
  decimalsSeen?: number | null;
  recipientSeen?: string | null;
  problems: string[];
  /**
   * The payer's latest transaction that landed with an error while no outcome is recorded: it
   * becomes the outcome (`failed`) only at expiry, if no other version succeeded by then.
   */
  failedAttempt?: { signature: string; reason: string } | null;
  /**
   * The lowest fee of the messages issued for the build (a refresh may re-price it): a landing
   * paying at least this paid a fee we quoted. Absent: never refreshed, `feeLamports` it is.
   */
  feeFloorLamports?: string;
  /** How many times the build was re-issued (absent: never), and the last time (Unix seconds). */
  refreshes?: number;
  refreshedAt?: number | null;
  /** Unix seconds. */
  createdAt: number;
  submittedAt: number | null;
  confirmedAt: number | null;
  slot: number | null;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

const buildIdOf = (e: StoredEvent): number | null => isBuildEvent(e) ? e.data.buildId : null;

export const buildsProjection: DeclaredProjection<BuildDoc> = {
  name: "build",
  handles: BUILD_EVENT_TYPES,
  keysOf(e) {
    const id = buildIdOf(e);
    return id === null ? [] : [[id]];
  },
  evolve(doc, e) {
    if (e.type === "TokenBuilt") {
      return {
        ...keptOf(e.data),
        status: "built",
        signature: null,
        feeVerified: false,
        feeLamportsSeen: null,
        supplyRawSeen: null,
        problems: [],
        createdAt: seconds(e.at),
        submittedAt: null,
        confirmedAt: null,
        slot: null,
      };
    }
    if (!doc) return doc;
    switch (e.type) {
      case "TransactionSubmitted":
        // A late relay report never moves a final record backwards.
        if (FINAL_STATUSES.includes(doc.status)) return doc;
        return {
          ...doc,
          status: "submitted",
          signature: e.data.signature,
          submittedAt: seconds(e.at),
        };
      case "CreationConfirmed":
        return {
          ...doc,
          status: "confirmed",
          signature: e.data.signature,
          feeVerified: true,
          feeLamportsSeen: e.data.feeLamportsSeen,
          supplyRawSeen: e.data.supplyRaw,
          decimalsSeen: e.data.decimalsSeen ?? null,
          recipientSeen: e.data.recipientSeen ?? null,
          confirmedAt: e.data.blockTime ?? seconds(e.at),
          slot: e.data.slot,
        };
      case "TransactionFailed":
        if (FINAL_STATUSES.includes(doc.status)) return doc;
        return {
          ...doc,
          failedAttempt: { signature: e.data.signature, reason: e.data.reason },
          problems: [e.data.reason],
        };
      case "CreationFailed":
        return { ...doc, status: "failed", signature: e.data.signature, problems: [e.data.reason] };
      case "CreationUnverified":
        return {
          ...doc,
          status: "unverified",
          signature: e.data.signature,
          // The seed's "whether the service fee is present": a short supply leaves a paid fee paid.
          feeVerified:
            BigInt(e.data.feeLamportsSeen) >= BigInt(doc.feeFloorLamports ?? doc.feeLamports),
          feeLamportsSeen: e.data.feeLamportsSeen,
          supplyRawSeen: e.data.supplyRawSeen,
          decimalsSeen: e.data.decimalsSeen ?? null,
          recipientSeen: e.data.recipientSeen ?? null,
          problems: e.data.problems,
          confirmedAt: e.data.blockTime ?? seconds(e.at),
          slot: e.data.slot,
        };
      case "BuildExpired":
        // A nonce build's expiry says why (its nonce moved on); a blockhash's is its height.
        return {
          ...doc,
          status: "expired",
          ...(e.data.reason ? { problems: [e.data.reason] } : {}),
        };
      case "BuildRefreshed":
        return refreshed(doc, e.data, seconds(e.at));
      default:
        return doc;
    }
  },
};

/**
 * A re-issued build: the latest message's blockhash, validity and fee, the floor of the fees
 * issued, and back to `built` if the watcher had expired it (nothing landed, or it would not
 * have). A build that landed is not refreshed (the command refuses), so its record stays.
 */
function refreshed(
  doc: BuildDoc,
  d: BuildRefreshed["data"],
  at: number,
): BuildDoc {
  if (doc.status !== "built" && doc.status !== "submitted" && doc.status !== "expired") return doc;
  const floor = BigInt(doc.feeFloorLamports ?? doc.feeLamports);
  const fee = BigInt(d.feeLamports);
  return {
    ...doc,
    status: doc.status === "expired" ? "built" : doc.status,
    blockhash: d.blockhash,
    lastValidBlockHeight: d.lastValidBlockHeight,
    messageHash: d.messageHash,
    feeLamports: d.feeLamports,
    feeFloorLamports: (fee < floor ? fee : floor).toString(),
    refreshes: (doc.refreshes ?? 0) + 1,
    refreshedAt: at,
  };
}

/** Lookup indexes: a build is found by its mint, its message hash, its reference or signature. */
const index = (
  name: string,
  handles: readonly EventType[],
  keyOf: (e: StoredEvent) => string | null,
): DeclaredProjection<number> => ({
  name,
  handles,
  keysOf: (e) => {
    const k = keyOf(e);
    return k === null ? [] : [[k]];
  },
  evolve: (doc, e) => buildIdOf(e) ?? doc,
});

export const buildByMintProjection = index(
  "build_by_mint",
  ["TokenBuilt"],
  (e) => (e.type === "TokenBuilt" ? e.data.mint : null),
);
/** Every message issued for a build, the first and each refresh's, finds it. */
export const buildByMessageProjection = index(
  "build_by_message",
  ["TokenBuilt", "BuildRefreshed"],
  (e) => (e.type === "TokenBuilt" || e.type === "BuildRefreshed" ? e.data.messageHash : null),
);
export const buildByReferenceProjection = index(
  "build_by_reference",
  ["TokenBuilt"],
  (e) => (e.type === "TokenBuilt" ? e.data.reference : null),
);
export const buildBySignatureProjection = index("build_by_signature", [
  "TransactionSubmitted",
  "CreationConfirmed",
  "CreationUnverified",
  "CreationFailed",
  "TransactionFailed",
], (e) => {
  switch (e.type) {
    case "TransactionSubmitted":
    case "CreationConfirmed":
    case "CreationUnverified":
      return e.data.signature;
    case "CreationFailed":
      return e.data.signature;
    case "TransactionFailed":
      return e.data.signature;
    default:
      return null;
  }
});

/** Builds still waiting for an outcome; the watcher walks this set. */
export interface OpenBuildDoc {
  buildId: number;
  reference: string;
  mint: string;
  /** Null: a durable nonce build, open until it lands or its nonce moves on (`nonce`). */
  lastValidBlockHeight: number | null;
  /**
   * A durable nonce build's nonce account, the nonce its message uses and the authority that must
   * still hold it (the payer, the message's only signer).
   */
  nonce?: { account: string; value: string; authority: string };
  /** Unix seconds: no transaction of the build can be older (bounds the watcher's first scan). */
  createdAt: number;
}

export const openBuildsProjection: DeclaredProjection<OpenBuildDoc> = {
  name: "open_build",
  // Neither a submission nor a failed version changes what the watcher needs: the build stays
  // open until its outcome.
  handles: BUILD_EVENT_TYPES.filter((t) =>
    t !== "TransactionSubmitted" && t !== "TransactionFailed"
  ),
  keysOf: (e) => {
    const id = buildIdOf(e);
    // Neither a submission nor a failed version is an outcome: the build stays open.
    return id === null || e.type === "TransactionSubmitted" || e.type === "TransactionFailed"
      ? []
      : [[id]];
  },
  evolve: (doc, e) => {
    if (e.type === "TokenBuilt") {
      return {
        buildId: e.data.buildId,
        reference: e.data.reference,
        mint: e.data.mint,
        lastValidBlockHeight: e.data.lastValidBlockHeight,
        ...(e.data.nonceAccount
          ? {
            nonce: {
              account: e.data.nonceAccount,
              value: e.data.blockhash,
              authority: e.data.payer,
            },
          }
          : {}),
        createdAt: seconds(e.at),
      };
    }
    // A refresh moves the expiry on, so the watcher waits for the new message; a build the
    // watcher had expired is open again (none of its transactions is older than the refresh).
    if (e.type === "BuildRefreshed") {
      return {
        buildId: e.data.buildId,
        reference: e.data.reference,
        mint: e.data.mint,
        lastValidBlockHeight: e.data.lastValidBlockHeight,
        createdAt: doc?.createdAt ?? seconds(e.at),
      };
    }
    return null;
  },
};
