/**
 * Purchases and keys: pure decisions over the current purchase and key state.
 * One active key per purchase; rotation and deletion end the old secret at once; a banned or
 * suspended key cannot be rotated or deleted away to escape the ban.
 */
import type { KeyDoc } from "../../../projections/keys.ts";
import type { PurchaseDoc } from "../../../projections/purchases.ts";
import { reject, type Rejection } from "../../kernel/rejection.ts";
import { pricePayment } from "./pricing.ts";
import type { AccessEvent } from "./events.ts";
import type { AccessPaymentQuoted } from "../../../events/types.ts";

export type AccessCommand =
  // The quote as it will be recorded, its expiry always set.
  | ({ type: "QuotePurchase" } & Required<AccessPaymentQuoted["data"]>)
  | {
    type: "RecordPayment";
    purchaseId: string;
    signature: string;
    slot: number;
    blockTime: number | null;
    /** Base units the payment brought to the treasury. */
    received: string;
    /** The price now: a payment landed after its quote expired is priced at it (SOL only). */
    currentSolUsd: number | null;
    stablecoinDecimals: number;
  }
  | {
    type: "QuoteTopUp";
    purchaseId: string;
    wallet: string;
    /** What the purchase owed when the top-up was priced (it must still owe that). */
    owed: string;
    amount: string;
    solUsd: number | null;
    lastValidBlockHeight: number;
    expiresAt: number;
  }
  | { type: "IssueKey"; purchaseId: string; wallet: string; keyId: string; secretMac: string }
  | { type: "RotateKey"; keyId: string; wallet: string; secretMac: string }
  | { type: "DeleteKey"; keyId: string; wallet: string };

export interface AccessState {
  purchase: PurchaseDoc | null;
  key: KeyDoc | null;
}

const notFound = (what: string) => reject("not_found", `${what} not found`);

export function decideAccess(cmd: AccessCommand, s: AccessState): AccessEvent[] | Rejection {
  switch (cmd.type) {
    case "QuotePurchase": {
      if (s.purchase) return reject("invalid_request", "purchase already exists");
      const { type: _t, ...data } = cmd;
      return [{ type: "AccessPaymentQuoted", v: 2, data }];
    }
    case "RecordPayment": {
      const p = s.purchase;
      if (!p) return notFound("purchase");
      // Each payment counts once, and nothing more once the fee is paid.
      if (p.status === "paid" || p.payments.includes(cmd.signature)) return [];
      const received = BigInt(cmd.received);
      const priced = pricePayment({
        currency: p.currency,
        quote: p.quote,
        owed: { amount: BigInt(p.owed), solUsd: p.owedSolUsd },
        feeUsd: p.usd,
        nothingPaid: p.payments.length === 0,
        received,
        blockTime: cmd.blockTime,
        currentSolUsd: cmd.currentSolUsd,
        decimals: cmd.stablecoinDecimals,
      });
      if (priced.shortfall === 0n) {
        return [{
          type: "AccessPurchased",
          v: 1,
          data: {
            purchaseId: p.purchaseId,
            wallet: p.wallet,
            currency: p.currency,
            amount: String(BigInt(p.received) + received),
            signature: cmd.signature,
            slot: cmd.slot,
          },
        }];
      }
      return [{
        type: "AccessUnderpaid",
        v: 1,
        data: {
          purchaseId: p.purchaseId,
          signature: cmd.signature,
          slot: cmd.slot,
          blockTime: cmd.blockTime,
          received: cmd.received,
          late: priced.late,
          solUsd: priced.solUsd,
          shortfall: String(priced.shortfall),
        },
      }];
    }
    case "QuoteTopUp": {
      const p = s.purchase;
      if (!p || p.wallet !== cmd.wallet) return notFound("purchase");
      if (p.status !== "underpaid") {
        return reject("invalid_request", "this purchase owes nothing to top up", {
          purchaseId: p.status === "paid" ? "already paid" : "no payment short of the fee yet",
        });
      }
      if (p.owed !== cmd.owed) {
        return reject(
          "invalid_request",
          "a payment was counted meanwhile: check the purchase again",
          {
            purchaseId: "what it owes changed",
          },
        );
      }
      const { type: _t, wallet: _w, owed: _o, ...data } = cmd;
      return [{ type: "AccessTopUpQuoted", v: 1, data }];
    }
    case "IssueKey": {
      const p = s.purchase;
      if (!p || p.wallet !== cmd.wallet) return notFound("purchase");
      if (p.status !== "paid") {
        return reject("invalid_request", "the access fee for this purchase is not confirmed yet", {
          purchaseId: "payment not confirmed",
        });
      }
      if (p.activeKeyId) {
        return reject("invalid_request", "this purchase already has an active key", {
          purchaseId: "one active key per purchase: rotate or delete it first",
        });
      }
      return [{
        type: "KeyIssued",
        v: 1,
        data: {
          keyId: cmd.keyId,
          purchaseId: p.purchaseId,
          wallet: p.wallet,
          secretMac: cmd.secretMac,
        },
      }];
    }
    case "RotateKey":
    case "DeleteKey": {
      const k = s.key;
      if (!k || k.wallet !== cmd.wallet || k.deleted) return notFound("key");
      if (k.banned || k.suspended) {
        return reject("forbidden", "this key is banned or suspended", {
          keyId: k.banned ? "banned" : "suspended",
        });
      }
      return cmd.type === "RotateKey"
        ? [{
          type: "KeyRotated",
          v: 1,
          data: { keyId: k.keyId, purchaseId: k.purchaseId, secretMac: cmd.secretMac },
        }]
        : [{ type: "KeyDeleted", v: 1, data: { keyId: k.keyId, purchaseId: k.purchaseId } }];
    }
  }
}

export const accessStream = (cmd: AccessCommand, s: AccessState): string =>
  "purchaseId" in cmd ? `purchase-${cmd.purchaseId}` : `purchase-${s.key?.purchaseId ?? "unknown"}`;
