/**
 * The verification command: read the transaction back from the chain (confirmed) and check mint,
 * full supply, decimals, recipient and fee against the build it belongs to; once it has landed,
 * the view reports what the transaction shows, not what the build intended. A final answer (confirmed, failed,
 * unverified) is recorded once and afterwards served from the projection without any RPC call.
 */
import type { BuildDoc } from "../../projections/builds.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import { assessCreation } from "./assess.ts";
import { buildBy, ownBuildBy } from "./build-records.ts";
import { clusterHasSeen, readLanded, signedByPayer, speaksFor } from "./chain-reader.ts";
import { noteForeign } from "../solana/foreign-transactions.ts";
import { recordLifecycle } from "./handle.ts";

export type VerificationStatus = "pending" | "confirmed" | "failed" | "unverified";

export interface Verification {
  signature: string;
  status: VerificationStatus;
  mint: string | null;
  supplyRaw: string;
  decimals: number | null;
  recipient: string | null;
  feeVerified: boolean;
  fee: { amount: string; currency: "SOL" };
}

/** Statuses recorded once and then served from the projection. */
const FINAL = new Set<string>(["confirmed", "failed", "unverified"]);
const isFinal = (status: string): status is "confirmed" | "failed" | "unverified" =>
  FINAL.has(status);

export async function verifySignature(
  s: Services,
  caller: { keyId: string },
  signature: string,
): Promise<Verification> {
  let b = await ownBuildBy(s.kv, caller.keyId, "build_by_signature", signature);
  if (b && b.signature === signature && isFinal(b.status)) return verification(b, signature);

  const landed = await readLanded(s.connection, signature);
  if (!landed) {
    if (!b) {
      // Sent through the caller's own RPC and not confirmed yet: which build it is shows once it
      // can be read, so until then it is only known to be in flight.
      if (await clusterHasSeen(s.connection, signature)) return unknownBuild(signature, "pending");
      throw new ApiError("not_found", "No such transaction on chain or in our records");
    }
    const view = verification(b, signature);
    // A durable nonce build has no height to pass: the watcher says when its nonce moved on.
    if (view.status === "pending" && b.lastValidBlockHeight !== null) {
      const height = await s.connection.getBlockHeight("confirmed");
      if (height > b.lastValidBlockHeight) view.status = "failed";
    }
    return view;
  }
  // Sent through the caller's own RPC: find the build by its reference key, or by its mint.
  for (const k of b ? [] : landed.accountKeys) {
    const cand = await buildBy(s.kv, "build_by_reference", k) ??
      await buildBy(s.kv, "build_by_mint", k);
    if (cand && cand.keyId === caller.keyId) {
      b = cand;
      break;
    }
  }
  // Landed, but not one of this key's builds: nothing of ours to vouch for.
  if (!b) return unknownBuild(signature, "unverified");
  // Carries the build's reference or mint but its payer did not sign it: anyone's transaction,
  // which says nothing about the build and must not change its record.
  if (!signedByPayer(landed, b.payer)) {
    await noteForeign(s.kv, s.logger, {
      signature,
      address: b.reference,
      buildId: b.buildId,
      signers: landed.signers,
    });
    return unknownBuild(signature, "unverified");
  }
  // The payer's own, but it created nothing: not the build's landing, and no record changes.
  if (!speaksFor(landed, b)) return unknownBuild(signature, "unverified");
  const { build: after } = await recordLifecycle(s, b.buildId, {
    type: "RecordLanding",
    signature,
    slot: landed.slot,
    blockTime: landed.blockTime,
    assessment: assessCreation(b, landed),
  });
  return verification(after ?? b, signature);
}

/** The seed's verification view of a build record, as seen through one signature. */
export function verification(b: BuildDoc, signature: string): Verification {
  const status: VerificationStatus =
    b.signature !== signature && b.status !== "built" && b.status !== "submitted"
      ? "unverified"
      // This transaction failed; the build is still open for another version of it.
      : !isFinal(b.status) && b.failedAttempt?.signature === signature
      ? "failed"
      : isFinal(b.status)
      ? b.status
      : b.status === "expired"
      ? "failed"
      : "pending";
  // The landing this view speaks for: what it put on chain (supply, decimals, recipient); before
  // one is read, what the build intended.
  const landed = b.signature === signature &&
    (b.status === "confirmed" || b.status === "unverified");
  return {
    signature,
    status,
    mint: b.mint,
    supplyRaw: landed ? b.supplyRawSeen ?? b.supplyRaw : b.supplyRaw,
    decimals: landed ? b.decimalsSeen ?? b.decimals : b.decimals,
    recipient: landed ? b.recipientSeen ?? b.recipient : b.recipient,
    // Only the transaction the record settled on says anything about the fee.
    feeVerified: b.signature === signature && isFinal(b.status) && b.feeVerified,
    fee: { amount: b.feeLamportsSeen ?? b.feeLamports, currency: "SOL" },
  };
}

/** A signature no build of the caller's can be tied to (yet): no build fields to show. */
function unknownBuild(signature: string, status: "pending" | "unverified"): Verification {
  return {
    signature,
    status,
    mint: null,
    supplyRaw: "0",
    decimals: null,
    recipient: null,
    feeVerified: false,
    fee: { amount: "0", currency: "SOL" },
  };
}
