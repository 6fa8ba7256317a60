/**
 * The lifecycle of a build as pure decisions. Every outcome is decided from the build's current
 * record, so a job delivered twice, or a relay and the watcher racing, append nothing twice:
 * a final record (confirmed, failed, unverified, expired) never changes again.
 */
import { decideSuspension } from "../admin/suspension.ts";
import type { CreationEvent } from "./events.ts";
import { type BuildDoc, FINAL_STATUSES } from "../../projections/builds.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import type { Assessment } from "./assess.ts";

export type LifecycleCommand =
  | { type: "RecordSubmission"; signature: string; via: "relay" | "watcher" }
  | {
    type: "RecordLanding";
    signature: string;
    slot: number;
    blockTime: number | null;
    assessment: Assessment;
  }
  | { type: "RecordExpiry"; blockHeight: number };

export interface LifecycleState {
  build: BuildDoc;
  /** The key a suspension would fall on: the purchase's active key (else the build's own). */
  key: KeyDoc | null;
  suspendAfterUnverified: number;
  /** Unverified landings already recorded on the build's purchase, all its keys together. */
  recordedUnverified?: number;
}

export function decideLifecycle(cmd: LifecycleCommand, s: LifecycleState): CreationEvent[] {
  const b = s.build;
  if (FINAL_STATUSES.includes(b.status)) return [];
  const base = { buildId: b.buildId, mint: b.mint };
  switch (cmd.type) {
    case "RecordSubmission":
      if (b.status === "submitted" && b.signature === cmd.signature) return [];
      return [{
        type: "TransactionSubmitted",
        v: 1,
        data: { ...base, signature: cmd.signature, via: cmd.via },
      }];
    case "RecordExpiry":
      if (cmd.blockHeight <= b.lastValidBlockHeight) return [];
      return [{ type: "BuildExpired", v: 1, data: { ...base, blockHeight: cmd.blockHeight } }];
    case "RecordLanding": {
      const a = cmd.assessment;
      const submitted: CreationEvent[] = b.signature === cmd.signature ? [] : [{
        type: "TransactionSubmitted",
        v: 1,
        data: { ...base, signature: cmd.signature, via: "watcher" },
      }];
      if (a.status === "failed") {
        return [...submitted, {
          type: "CreationFailed",
          v: 1,
          data: { ...base, signature: cmd.signature, reason: a.reason },
        }];
      }
      if (a.status === "confirmed") {
        return [...submitted, {
          type: "CreationConfirmed",
          v: 1,
          data: {
            ...base,
            signature: cmd.signature,
            slot: cmd.slot,
            blockTime: cmd.blockTime,
            feeLamportsSeen: a.feeLamportsSeen.toString(),
            supplyRaw: a.supplyRawSeen.toString(),
            ...seenOnChain(a),
          },
        }];
      }
      const events: CreationEvent[] = [...submitted, {
        type: "CreationUnverified",
        v: 1,
        data: {
          ...base,
          keyId: b.keyId,
          signature: cmd.signature,
          slot: cmd.slot,
          blockTime: cmd.blockTime,
          feeLamportsSeen: a.feeLamportsSeen.toString(),
          supplyRawSeen: a.supplyRawSeen.toString(),
          ...seenOnChain(a),
          problems: a.problems,
        },
      }];
      // The landing that pushes the key past the threshold suspends it in the same commit.
      if (s.key) {
        events.push(
          ...decideSuspension(s.key, s.suspendAfterUnverified, { recorded: s.recordedUnverified }),
        );
      }
      return events;
    }
  }
}

/** Decimals and recipient as the landed transaction shows them, where the assessment read them. */
function seenOnChain(a: { decimalsSeen?: number | null; recipientSeen?: string | null }) {
  return {
    ...(a.decimalsSeen !== undefined ? { decimalsSeen: a.decimalsSeen } : {}),
    ...(a.recipientSeen !== undefined ? { recipientSeen: a.recipientSeen } : {}),
  };
}
