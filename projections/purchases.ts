/**
 * Access purchases: the quote in force (the first, then any top-up), the payments counted toward
 * the fee, and which key is active on it.
 */
import type { StoredEvent } from "../events/types.ts";
import type { DeclaredProjection } from "../events/projection.ts";

/** The quote a payment landed within is counted at: `amount` at the SOL price `solUsd`. */
export interface OpenQuote {
  amount: string;
  solUsd: number | null;
  quotedAt: number;
  expiresAt: number;
}

export interface PurchaseDoc {
  purchaseId: string;
  wallet: string;
  currency: "SOL" | "STABLECOIN";
  amount: string;
  usd: number;
  reference: string;
  treasury: string;
  lastValidBlockHeight: number;
  /** The first quote's amount stays in `amount`; this is the quote payable now. */
  quote: OpenQuote;
  expiresAt: number;
  status: "quoted" | "underpaid" | "paid";
  /** Base units received so far, and what is still owed: base units at the SOL price `owedSolUsd`. */
  received: string;
  owed: string;
  owedSolUsd: number | null;
  /** What the last short payment left owing (the same as `owed` while underpaid). */
  shortfall: string | null;
  /** Every payment counted, so none is counted twice. */
  payments: string[];
  signature: string | null;
  quotedAt: number;
  paidAt: number | null;
  activeKeyId: string | null;
  keyIds: string[];
}

export const purchasesProjection: DeclaredProjection<PurchaseDoc> = {
  name: "purchase",
  handles: [
    "AccessPaymentQuoted",
    "AccessUnderpaid",
    "AccessTopUpQuoted",
    "AccessPurchased",
    "KeyIssued",
    "KeyDeleted",
  ],
  keysOf(e: StoredEvent) {
    switch (e.type) {
      case "AccessPaymentQuoted":
      case "AccessUnderpaid":
      case "AccessTopUpQuoted":
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
      case "AccessPaymentQuoted": {
        // The registry upcasts v1 quotes (upcast.ts) before this fold sees them.
        const expiresAt = e.data.expiresAt;
        if (expiresAt === undefined) {
          throw new Error(
            `AccessPaymentQuoted v${e.v} reached the purchase fold without its upcast`,
          );
        }
        return {
          purchaseId: e.data.purchaseId,
          wallet: e.data.wallet,
          currency: e.data.currency,
          amount: e.data.amount,
          usd: e.data.usd,
          reference: e.data.reference,
          treasury: e.data.treasury,
          lastValidBlockHeight: e.data.lastValidBlockHeight,
          quote: {
            amount: e.data.amount,
            solUsd: e.data.solUsd,
            quotedAt: e.at,
            expiresAt,
          },
          expiresAt,
          status: "quoted",
          received: "0",
          owed: e.data.amount,
          owedSolUsd: e.data.solUsd,
          shortfall: null,
          payments: [],
          signature: null,
          quotedAt: e.at,
          paidAt: null,
          activeKeyId: null,
          keyIds: [],
        };
      }
      case "AccessUnderpaid":
        return doc && {
          ...doc,
          status: "underpaid",
          received: String(BigInt(doc.received) + BigInt(e.data.received)),
          owed: e.data.shortfall,
          owedSolUsd: e.data.solUsd,
          shortfall: e.data.shortfall,
          payments: [...doc.payments, e.data.signature],
        };
      case "AccessTopUpQuoted": {
        const { amount, solUsd, expiresAt, lastValidBlockHeight } = e.data;
        return doc && {
          ...doc,
          quote: { amount, solUsd, quotedAt: e.at, expiresAt },
          owed: amount,
          owedSolUsd: solUsd,
          expiresAt,
          lastValidBlockHeight,
        };
      }
      case "AccessPurchased":
        return doc && {
          ...doc,
          status: "paid",
          received: e.data.amount,
          owed: "0",
          shortfall: null,
          payments: [...doc.payments, e.data.signature],
          signature: e.data.signature,
          paidAt: e.at,
        };
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
export const walletPurchasesProjection: DeclaredProjection<{ purchaseId: string; at: number }> = {
  name: "wallet_purchase",
  handles: ["AccessPaymentQuoted"],
  keysOf: (e) => e.type === "AccessPaymentQuoted" ? [[e.data.wallet, e.data.purchaseId]] : [],
  evolve: (doc, e) =>
    e.type === "AccessPaymentQuoted" ? { purchaseId: e.data.purchaseId, at: e.at } : doc,
};

/** Index: the payment's reference key leads back to its purchase. */
export const purchaseByReferenceProjection: DeclaredProjection<string> = {
  name: "purchase_by_reference",
  handles: ["AccessPaymentQuoted"],
  keysOf: (e) => e.type === "AccessPaymentQuoted" ? [[e.data.reference]] : [],
  evolve: (doc, e) => e.type === "AccessPaymentQuoted" ? e.data.purchaseId : doc,
};
