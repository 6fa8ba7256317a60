/**
 * Automatic suspension: when creations keep landing unverified (CreationUnverified: the payer
 * signed something other than what we built, so the fee, the supply or the mint is wrong; design.md
 * counts each against the key) more than `threshold` times, the key is suspended until an
 * operator lifts it. The count belongs to the purchase (every key it ever had), so deleting a key
 * and creating a new one does not reset it. Lifting clears the suspension but not the count, so
 * the next unverified landing suspends again.
 */
import type { KeySuspended } from "../../events/types.ts";
import type { KeyDoc } from "../../projections/keys.ts";

export interface SuspensionOptions {
  /**
   * CreationUnverified events for this key that are being appended in the same commit but are
   * not yet in `key.unverifiedCount`. Default 1: the caller read the key, decided on one new
   * CreationUnverified, and asks whether it tips the key over. A sweep over settled state
   * passes 0.
   */
  pending?: number;
  /**
   * Unverified landings already recorded against the key's purchase, across all its keys (deleted
   * ones included). Default: the key's own count.
   */
  recorded?: number;
}

/** Pure: the KeySuspended event to append with the landing, or nothing. */
export function decideSuspension(
  key: KeyDoc,
  threshold: number,
  opts: SuspensionOptions = {},
): KeySuspended[] {
  const count = (opts.recorded ?? key.unverifiedCount) + (opts.pending ?? 1);
  if (key.suspended !== null || key.banned !== null || count <= threshold) return [];
  const event: KeySuspended = {
    type: "KeySuspended",
    v: 1,
    data: {
      keyId: key.keyId,
      reason: `${count} creations landed unverified (the fee, the supply or the mint was wrong)`,
    },
  };
  return [event];
}

/** The stream a key's access events belong to (the purchase's, as in src/domain/access). */
export const keyStream = (key: KeyDoc) => `purchase-${key.purchaseId}`;
