/**
 * Conduct: what follows when creations land unverified (CreationUnverified: the payer signed
 * something other than what we built, so the fee, the supply or the mint is wrong).
 *
 * An integrator builds for wallets it does not control, so an unverified landing is first the
 * payer's: that wallet is refused further builds on every key. The key is suspended only for its
 * own conduct: its own purchase wallet landing such creations, or a share of the purchase's recent
 * landings going unverified from many distinct payers, which one end user or a handful cannot
 * reach. Counts belong to the purchase, so deleting a key and creating a new one resets nothing;
 * lifting a suspension clears it but not the counts, so the next unverified landing suspends again.
 * Its settings are `conduct` in src/config.ts.
 */
import type { KeySuspended } from "../../events/types.ts";
import type { ConductPolicy } from "../config.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import {
  type PayerConductDoc,
  type PurchaseConductDoc,
  RECENT_LANDINGS,
} from "../../projections/conduct.ts";

/** Pure: why a build for this payer is refused (the `payer` field's message), or null. */
export function payerRefusal(doc: PayerConductDoc | null, p: ConductPolicy): string | null {
  if (!doc || doc.unverified < p.refusePayerAfter) return null;
  return `this wallet has landed ${doc.unverified} creation(s) without the service fee or with ` +
    `the built transaction altered (the last: mint ${doc.last.mint}, signature ` +
    `${doc.last.signature}); the service builds no more for it`;
}

/** The share rule's view of a purchase's recent landings. */
export function recentConduct(c: PurchaseConductDoc) {
  const unverified = c.recent.filter((l) => !l.ok);
  return {
    landings: c.recent.length,
    unverified: unverified.length,
    payers: new Set(unverified.map((l) => l.payer)).size,
  };
}

/** Why the key's conduct suspends it, or null. `c` already holds the landing being recorded. */
export function suspensionReason(c: PurchaseConductDoc, p: ConductPolicy): string | null {
  if (c.byKeyWallet > p.keyWalletTolerated) {
    return `${c.byKeyWallet} creations paid by the key's own wallet landed unverified ` +
      `(the fee, the supply or the mint was wrong)`;
  }
  const r = recentConduct(c);
  if (r.payers >= p.minPayers && r.unverified > p.share * r.landings) {
    return `${r.unverified} of the last ${r.landings} creations landed unverified, paid by ` +
      `${r.payers} different wallets`;
  }
  return null;
}

/** Pure: the KeySuspended event to append with the landing, or nothing. */
export function decideSuspension(
  key: KeyDoc,
  conduct: PurchaseConductDoc,
  p: ConductPolicy,
): KeySuspended[] {
  if (key.suspended !== null || key.banned !== null) return [];
  const reason = suspensionReason(conduct, p);
  return reason ? [{ type: "KeySuspended", v: 1, data: { keyId: key.keyId, reason } }] : [];
}

/** The policy as GET /v1/me publishes it, beside the purchase's standing. */
export function conductView(c: PurchaseConductDoc, p: ConductPolicy) {
  return {
    recent: { window: RECENT_LANDINGS, ...recentConduct(c) },
    byKeyWallet: c.byKeyWallet,
    unverifiedLandings: c.recent.filter((l) => !l.ok).map((l) => ({
      mint: l.mint,
      signature: l.signature,
      payer: l.payer,
      at: new Date(l.at).toISOString(),
      byKeyWallet: l.byKeyWallet === true,
    })),
    policy: {
      refusePayerAfter: p.refusePayerAfter,
      suspendAfterByKeyWallet: p.keyWalletTolerated,
      suspendShare: p.share,
      suspendMinPayers: p.minPayers,
    },
  };
}
