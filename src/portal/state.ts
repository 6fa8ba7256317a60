/**
 * What the portal page shows for a signed-in wallet: its purchases, each with its active key. A
 * quote that expired with nothing paid is no longer offered (a payment landing on it later is
 * still counted when checked, at the price of its day).
 */
import { keysProjection, keyStatus } from "../../projections/keys.ts";
import { purchasesProjection, walletPurchasesProjection } from "../../projections/purchases.ts";
import { kvReads, read, readList } from "../commands/read.ts";
import type { Services } from "../services.ts";
import { usageToday } from "../usage/usage-today.ts";
import { purchaseFields } from "../domain/access/purchase-view.ts";
import { EMPTY_CONDUCT, purchaseConductProjection } from "../../projections/conduct.ts";
import { conductView } from "../conduct/policy.ts";

export async function walletPurchases(s: Services, wallet: string) {
  const out = [];
  const reads = kvReads(s.kv);
  for (const { purchaseId } of await readList(s.kv, walletPurchasesProjection, [wallet])) {
    const p = await read(reads, purchasesProjection, [purchaseId]);
    if (!p) continue;
    if (p.status === "quoted" && p.expiresAt < s.clock()) continue;
    const key = p.activeKeyId ? await read(reads, keysProjection, [p.activeKeyId]) : null;
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
          reason: key.banned ?? key.suspended,
          conduct: conductView(
            await read(reads, purchaseConductProjection, [key.purchaseId]) ?? EMPTY_CONDUCT,
            s.config.conduct,
          ),
        }
        : null,
    });
  }
  return out.sort((a, b) => b.quotedAt - a.quotedAt);
}
