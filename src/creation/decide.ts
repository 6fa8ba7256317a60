/**
 * The lifecycle of a build as pure decisions. Every outcome is decided from the build's current
 * record, so a job delivered twice, or a relay and the watcher racing, append nothing twice:
 * a final record (confirmed, failed, unverified, expired) never changes again.
 *
 * A failed transaction of the payer is a fact (`TransactionFailed`), not yet the outcome: a wallet
 * may send another version of the build's transaction (another signature), and a success before
 * the blockhash expires wins. The build is recorded `failed` once the cluster is past the
 * blockhash's validity with no success seen.
 */
import { decideSuspension } from "../conduct/policy.ts";
import type { ConductPolicy } from "../config.ts";
import { type PurchaseConductDoc, withLanding } from "../../projections/conduct.ts";
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
    /**
     * The cluster's block height when the landing was looked up, when known: past the
     * blockhash's validity no other version can land, so a failure is the outcome.
     */
    blockHeight?: number;
    /** A durable nonce build: its nonce has moved on, so no other version can land either. */
    nonceMoved?: boolean;
  }
  | {
    type: "RecordExpiry";
    blockHeight: number;
    /**
     * A durable nonce build whose message can no longer land: the nonce its account holds now
     * (null: no nonce any more), and the authority it was handed to if that is what changed.
     */
    nonceMoved?: { now: string | null; authority?: string };
  };

/**
 * Whether no version of the build can land any more: past its blockhash's validity or, on a
 * durable nonce (no last valid block height), once its nonce has moved on.
 */
function pastValidity(
  b: Pick<BuildDoc, "lastValidBlockHeight">,
  blockHeight: number | undefined,
  nonceMoved: boolean,
): boolean {
  if (b.lastValidBlockHeight === null) return nonceMoved;
  return blockHeight !== undefined && blockHeight > b.lastValidBlockHeight;
}

/** Why a durable nonce build expired, for its record and webhook. */
export function nonceExpiryReason(now: string | null, authority?: string): string {
  if (authority) {
    return `the nonce account's authority is now ${authority}, not the payer, so this build's ` +
      "transaction (signed by the payer alone) can no longer land; build again";
  }
  return now === null
    ? "the nonce account no longer holds a durable nonce, and this build's transaction did not " +
      "land: it can no longer land; build again"
    : `the nonce account's nonce moved on (now ${now}) without this build's transaction ` +
      "landing: it can no longer land; build again";
}

export interface LifecycleState {
  build: BuildDoc;
  /** The key a suspension would fall on: the purchase's active key (else the build's own). */
  key: KeyDoc | null;
  policy: ConductPolicy;
  /** The purchase's conduct before this landing (null: nothing recorded yet). */
  conduct: PurchaseConductDoc | null;
  /** The wallet that bought the purchase (null: unknown). */
  purchaseWallet: string | null;
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
    case "RecordExpiry": {
      if (!pastValidity(b, cmd.blockHeight, cmd.nonceMoved !== undefined)) return [];
      const failed = b.failedAttempt;
      if (failed) return failure(b, failed.signature, failed.reason);
      const moved = cmd.nonceMoved;
      const reason = moved ? { reason: nonceExpiryReason(moved.now, moved.authority) } : {};
      return [{
        type: "BuildExpired",
        v: 1,
        data: { ...base, blockHeight: cmd.blockHeight, ...reason },
      }];
    }
    case "RecordLanding": {
      const a = cmd.assessment;
      const submitted: CreationEvent[] = b.signature === cmd.signature ? [] : [{
        type: "TransactionSubmitted",
        v: 1,
        data: { ...base, signature: cmd.signature, via: "watcher" },
      }];
      if (a.status === "failed") {
        const expired = pastValidity(b, cmd.blockHeight, cmd.nonceMoved === true);
        if (expired) return failure(b, cmd.signature, a.reason);
        if (b.failedAttempt?.signature === cmd.signature) return [];
        return [{
          type: "TransactionFailed",
          v: 1,
          data: { ...base, signature: cmd.signature, slot: cmd.slot, reason: a.reason },
        }];
      }
      // Who built and paid, so the conduct read models can fold the landing.
      const party = { keyId: b.keyId, purchaseId: b.purchaseId, payer: b.payer };
      if (a.status === "confirmed") {
        return [...submitted, {
          type: "CreationConfirmed",
          v: 1,
          data: {
            ...base,
            ...party,
            signature: cmd.signature,
            slot: cmd.slot,
            blockTime: cmd.blockTime,
            feeLamportsSeen: a.feeLamportsSeen.toString(),
            supplyRaw: a.supplyRawSeen.toString(),
            ...seenOnChain(a),
          },
        }];
      }
      const byKeyWallet = s.purchaseWallet === b.payer;
      const events: CreationEvent[] = [...submitted, {
        type: "CreationUnverified",
        v: 1,
        data: {
          ...base,
          ...party,
          byKeyWallet,
          signature: cmd.signature,
          slot: cmd.slot,
          blockTime: cmd.blockTime,
          feeLamportsSeen: a.feeLamportsSeen.toString(),
          supplyRawSeen: a.supplyRawSeen.toString(),
          ...seenOnChain(a),
          problems: a.problems,
        },
      }];
      // The landing that shows the key's own conduct suspends it in the same commit.
      if (s.key) {
        const landing = {
          ok: false,
          payer: b.payer,
          mint: b.mint,
          signature: cmd.signature,
          at: 0,
          byKeyWallet,
        };
        events.push(...decideSuspension(s.key, withLanding(s.conduct, landing), s.policy));
      }
      return events;
    }
  }
}

/** The final failure, under the failed transaction's signature (submitted first if not yet). */
function failure(b: BuildDoc, signature: string, reason: string): CreationEvent[] {
  const base = { buildId: b.buildId, mint: b.mint };
  const submitted: CreationEvent[] = b.signature === signature ? [] : [{
    type: "TransactionSubmitted",
    v: 1,
    data: { ...base, signature, via: "watcher" },
  }];
  return [...submitted, { type: "CreationFailed", v: 1, data: { ...base, signature, reason } }];
}

/** Decimals and recipient as the landed transaction shows them, where the assessment read them. */
function seenOnChain(a: { decimalsSeen?: number | null; recipientSeen?: string | null }) {
  return {
    ...(a.decimalsSeen !== undefined ? { decimalsSeen: a.decimalsSeen } : {}),
    ...(a.recipientSeen !== undefined ? { recipientSeen: a.recipientSeen } : {}),
  };
}
