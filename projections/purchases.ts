/** Access purchases: the quote, the confirmed payment and which key is active on it. */
import type { StoredEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";

export interface PurchaseDoc {
  purchaseId: string;
  wallet: string;
  currency: "SOL" | "STABLECOIN";
  amount: string;
  usd: number;
  reference: string;
  treasury: string;
  lastValidBlockHeight: number;
  status: "quoted" | "paid";
  signature: string | null;
  quotedAt: number;
  paidAt: number | null;
  activeKeyId: string | null;
  keyIds: string[];
}

export const purchasesProjection: Projection<PurchaseDoc> = {
  name: "purchase",
  keysOf(e: StoredEvent) {
    switch (e.type) {
      case "AccessPaymentQuoted":
      case "AccessPurchased":
      case "KeyIssued":
      case "KeyDeleted":
        return [[e.data.purchaseId]];
      default:
        return [];
    }
  },
  evolve(doc, e) {
    switch (e.type) {
      case "AccessPaymentQuoted":
        return {
          purchaseId: e.data.purchaseId,
          wallet: e.data.wallet,
          currency: e.data.currency,
          amount: e.data.amount,
          usd: e.data.usd,
          reference: e.data.reference,
          treasury: e.data.treasury,
          lastValidBlockHeight: e.data.lastValidBlockHeight,
          status: "quoted",
          signature: null,
          quotedAt: e.at,
          paidAt: null,
          activeKeyId: null,
          keyIds: [],
        };
      case "AccessPurchased":
        return doc && { ...doc, status: "paid", signature: e.data.signature, paidAt: e.at };
      case "KeyIssued":
        return doc && { ...doc, activeKeyId: e.data.keyId, keyIds: [...doc.keyIds, e.data.keyId] };
      case "KeyDeleted":
        return doc && { ...doc, activeKeyId: null };
      default:
        return doc;
    }
  },
};

/** Index: a wallet's purchases, for the portal. */
export const walletPurchasesProjection: Projection<{ purchaseId: string; at: number }> = {
  name: "wallet_purchase",
  keysOf: (e) => e.type === "AccessPaymentQuoted" ? [[e.data.wallet, e.data.purchaseId]] : [],
  evolve: (doc, e) =>
    e.type === "AccessPaymentQuoted" ? { purchaseId: e.data.purchaseId, at: e.at } : doc,
};

/** Index: the payment's reference key leads back to its purchase. */
export const purchaseByReferenceProjection: Projection<string> = {
  name: "purchase_by_reference",
  keysOf: (e) => e.type === "AccessPaymentQuoted" ? [[e.data.reference]] : [],
  evolve: (doc, e) => e.type === "AccessPaymentQuoted" ? e.data.purchaseId : doc,
};
