/**
 * What operators see of keys and purchases (the listings are read in reads.ts). Views never carry
 * the secret's keyed hash: an operator tool has no use for it and a leaked listing must not help
 * anyone test guesses offline.
 */
import { type KeyDoc, keyStatus } from "../../projections/keys.ts";
import type { PurchaseDoc } from "../../projections/purchases.ts";
import { purchaseFields } from "../domain/access/purchase-view.ts";

export interface KeyView {
  keyId: string;
  purchaseId: string;
  wallet: string;
  status: "active" | "deleted" | "banned" | "suspended";
  banned: string | null;
  suspended: string | null;
  unverifiedCount: number;
  createdAt: string;
  rotatedAt: string | null;
}

export const keyView = (k: KeyDoc): KeyView => ({
  keyId: k.keyId,
  purchaseId: k.purchaseId,
  wallet: k.wallet,
  status: keyStatus(k),
  banned: k.banned,
  suspended: k.suspended,
  unverifiedCount: k.unverifiedCount,
  createdAt: new Date(k.createdAt).toISOString(),
  rotatedAt: k.rotatedAt === null ? null : new Date(k.rotatedAt).toISOString(),
});

export interface PurchaseView {
  purchaseId: string;
  wallet: string;
  status: PurchaseDoc["status"];
  currency: "SOL" | "STABLECOIN";
  amount: string;
  usd: number;
  signature: string | null;
  quotedAt: string;
  paidAt: string | null;
  activeKeyId: string | null;
  keyIds: string[];
}

export const purchaseView = (p: PurchaseDoc): PurchaseView => ({
  ...purchaseFields(p, (ms) => new Date(ms).toISOString()),
  wallet: p.wallet,
  activeKeyId: p.activeKeyId,
  keyIds: p.keyIds,
});

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` for the next page; null on the last one. */
  cursor: string | null;
}

export interface ListOptions {
  limit?: number;
  cursor?: string;
  /** Keys only: keep those with this status. */
  status?: KeyView["status"];
  /** Keep those of this wallet. */
  wallet?: string;
}

export const MAX_PAGE = 500;
