/**
 * The relay's follow-up of an update it sent (POST /v1/transactions): a queued job, one per
 * relayed update, that records its landing through the update's own verification
 * (`assessUpdate`, TokenUpdateLanded / TokenUpdateFailed with their webhooks) so the update
 * reaches landed or failed without the caller asking. The watcher's sweep does not look for
 * updates (they pay the treasury nothing when updates are free, and their mint exists already):
 * an update sent elsewhere is recorded when verified (GET /v1/tokens/{mint}/updates/{updateId}
 * ?signature=).
 *
 * Each run costs one getSignatureStatuses; a confirmed one adds the getTransaction that reads it
 * back; an unseen one adds getBlockHeight and a re-broadcast while its blockhash is valid. It ends
 * when the outcome is recorded, when the blockhash has passed unused (recorded as failed), or
 * after MAX_FOLLOWS runs, whichever comes first.
 */
import type { Enqueue } from "../../events/store.ts";
import { type UpdateDoc, updatesProjection } from "../../projections/updates.ts";
import { kvReads, read } from "../commands/read.ts";
import { base64Decode } from "../kernel/encoding.ts";
import type { Services } from "../services.ts";
import { assessUpdate, readLandedUpdate, recordUpdateOutcome } from "./update-verify.ts";

export const FOLLOW_MS = 2_000;
/** Runs at most: a blockhash lives about 150 blocks (~60 s); this leaves room past it. */
export const MAX_FOLLOWS = 90;
/**
 * Blocks past the blockhash's last valid height before an unseen update is recorded as expired:
 * a node behind the one that reported the height may not have its landing yet.
 */
export const EXPIRY_MARGIN_BLOCKS = 10;

export interface FollowMessage {
  kind: "update-follow";
  updateId: string;
  signature: string;
  /** The signed transaction (base64), re-broadcast while unseen. */
  transaction: string;
  attempt: number;
}

export const followEnqueue = (m: Omit<FollowMessage, "kind">): Enqueue => ({
  value: { kind: "update-follow", ...m } satisfies FollowMessage,
  delay: FOLLOW_MS,
});

/** Pure: what one run does, from the update's record and what the cluster said. */
export function decideFollow(
  u: UpdateDoc | null,
  msg: Pick<FollowMessage, "signature" | "attempt">,
  seen: "confirmed" | "processed" | null,
  height: number | null,
): "stop" | "read" | "wait" | "resend" | "expire" {
  if (!u || u.status !== "submitted" || u.signature !== msg.signature) return "stop";
  if (seen === "confirmed") return "read";
  if (msg.attempt >= MAX_FOLLOWS) return "stop";
  if (seen === "processed" || height === null) return "wait";
  if (height > u.lastValidBlockHeight + EXPIRY_MARGIN_BLOCKS) return "expire";
  return height > u.lastValidBlockHeight ? "wait" : "resend";
}

/** One run; true: run again later. */
export async function followUpdate(s: Services, msg: FollowMessage): Promise<boolean> {
  const u = await read(kvReads(s.kv), updatesProjection, [msg.updateId]);
  if (decideFollow(u, msg, null, null) === "stop") return false;
  const { value: [status] } = await s.connection.getSignatureStatuses([msg.signature]);
  const seen = !status
    ? null
    : status.confirmationStatus === "processed" || !status.confirmationStatus
    ? "processed"
    : "confirmed";
  const height = seen === null ? await s.connection.getBlockHeight("confirmed") : null;
  const step = decideFollow(u, msg, seen, height);
  if (step === "stop") return false;
  if (step === "read") return await readBack(s, u!, msg.signature);
  if (step === "expire") {
    await recordUpdateOutcome(s, u!.updateId, {
      type: "TokenUpdateFailed",
      v: 1,
      data: {
        updateId: u!.updateId,
        buildId: u!.buildId,
        keyId: u!.keyId,
        mint: u!.mint,
        signature: msg.signature,
        reason: "expired: its blockhash passed before it landed; build a new update",
      },
    });
    return false;
  }
  if (step === "resend") await resend(s, msg.transaction);
  return true;
}

async function readBack(s: Services, u: UpdateDoc, signature: string): Promise<boolean> {
  const landed = await readLandedUpdate(s, u, signature);
  // Confirmed but not served yet by this node: the next run reads it.
  if (!landed) return true;
  const verdict = assessUpdate(u, landed);
  // The relay sent exactly the issued message, signed by the authority: never expected.
  if (typeof verdict === "string") {
    s.logger.log("warn", "update-follow: relayed transaction is not the update's", {
      updateId: u.updateId,
      reason: verdict,
    });
    return false;
  }
  await recordUpdateOutcome(s, u.updateId, verdict);
  return false;
}

async function resend(s: Services, transaction: string): Promise<void> {
  try {
    await s.connection.sendRawTransaction(base64Decode(transaction), {
      skipPreflight: true,
      maxRetries: 0,
    });
  } catch {
    // Temporarily refused: the next run tries again.
  }
}
