/**
 * The fields of a purchase that every reader shows (the portal's owner, the admin listing, the
 * audit's purchases table), in one list; each reader adds its own and writes times the way it
 * answers them.
 */
import type { PurchaseDoc } from "../../../projections/purchases.ts";

export function purchaseFields<T>(p: PurchaseDoc, time: (ms: number) => T) {
  return {
    purchaseId: p.purchaseId,
    status: p.status,
    currency: p.currency,
    amount: p.amount,
    usd: p.usd,
    signature: p.signature,
    quotedAt: time(p.quotedAt),
    paidAt: p.paidAt === null ? null : time(p.paidAt),
  };
}
