/**
 * What the portal page shows for a signed-in wallet: its purchases, each with its active key. A
 * quote that expired with nothing paid is no longer offered (a payment landing on it later is
 * still counted when checked, at the price of its day).
 */
import { projectionKey } from "../../events/keys.ts";
import { type KeyDoc, keyStatus } from "../../projections/keys.ts";
import type { PurchaseDoc } from "../../projections/purchases.ts";
import type { Services } from "../services.ts";
import { usageToday } from "../usage/usage-today.ts";
import { purchaseFields } from "../domain/access/purchase-view.ts";

export async function walletPurchases(s: Services, wallet: string) {
  const out = [];
  for await (
    const e of s.kv.list<{ purchaseId: string }>({
      prefix: projectionKey("wallet_purchase", [wallet]),
    })
  ) {
    const p = (await s.kv.get<PurchaseDoc>(projectionKey("purchase", [e.value.purchaseId]))).value;
    if (!p) continue;
    if (p.status === "quoted" && p.expiresAt < s.clock()) continue;
    const key = p.activeKeyId
      ? (await s.kv.get<KeyDoc>(projectionKey("key", [p.activeKeyId]))).value
      : null;
    out.push({
      ...purchaseFields(p, (ms) => ms),
      expiresAt: p.expiresAt,
      received: p.received,
      shortfall: p.status === "underpaid" ? p.shortfall : null,
      key: key
        ? {
          keyId: key.keyId,
          status: keyStatus(key),
          createdAt: key.createdAt,
          rotatedAt: key.rotatedAt,
          usageToday: await usageToday(s, key.keyId, key.purchaseId),
        }
        : null,
    });
  }
  return out.sort((a, b) => b.quotedAt - a.quotedAt);
}
