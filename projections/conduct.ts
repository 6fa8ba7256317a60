/**
 * Who lands creations without our fee, as two folds: per payer wallet (refused further builds,
 * on every key) and per purchase (its recent landings, whose share and spread of unverified ones,
 * with its own wallet's count, decide whether the key itself is suspended). Events recorded
 * before landings named their payer and purchase are not counted here.
 */
import type { DeclaredProjection } from "../events/projection.ts";
import type { StoredEvent } from "../events/types.ts";

/** How many of a purchase's latest landings its conduct is judged on. */
export const RECENT_LANDINGS = 100;

export interface PayerConductDoc {
  /** Creations this wallet paid for that landed unverified (without the full fee, or altered). */
  unverified: number;
  last: { mint: string; signature: string; keyId: string; at: number };
}

export interface Landing {
  ok: boolean;
  payer: string;
  mint: string;
  signature: string;
  at: number;
  /** Paid by the wallet that bought the key (unverified landings only). */
  byKeyWallet?: boolean;
}

export interface PurchaseConductDoc {
  /** Unverified landings paid by the purchase's own wallet, all time. */
  byKeyWallet: number;
  /** The latest landings, oldest first, at most RECENT_LANDINGS. */
  recent: Landing[];
}

export const EMPTY_CONDUCT: PurchaseConductDoc = { byKeyWallet: 0, recent: [] };

/** The purchase's conduct with one more landing (the fold's step, and the decision's preview). */
export function withLanding(doc: PurchaseConductDoc | null, l: Landing): PurchaseConductDoc {
  const d = doc ?? EMPTY_CONDUCT;
  return {
    byKeyWallet: d.byKeyWallet + (!l.ok && l.byKeyWallet ? 1 : 0),
    recent: [...d.recent, l].slice(-RECENT_LANDINGS),
  };
}

/** The landing an outcome event records, when it names its payer and purchase. */
export function landingOf(e: StoredEvent): (Landing & { purchaseId: string }) | null {
  if (e.type !== "CreationConfirmed" && e.type !== "CreationUnverified") return null;
  const { payer, purchaseId, mint, signature } = e.data;
  if (!payer || !purchaseId) return null;
  const ok = e.type === "CreationConfirmed";
  return {
    ok,
    payer,
    purchaseId,
    mint,
    signature,
    at: e.at,
    ...(e.type === "CreationUnverified" && e.data.byKeyWallet ? { byKeyWallet: true } : {}),
  };
}

export const payerConductProjection: DeclaredProjection<PayerConductDoc> = {
  name: "payer_conduct",
  handles: ["CreationUnverified"],
  keysOf: (e) => (e.type === "CreationUnverified" && e.data.payer ? [[e.data.payer]] : []),
  evolve(doc, e) {
    if (e.type !== "CreationUnverified") return doc;
    const { mint, signature, keyId } = e.data;
    return { unverified: (doc?.unverified ?? 0) + 1, last: { mint, signature, keyId, at: e.at } };
  },
};

export const purchaseConductProjection: DeclaredProjection<PurchaseConductDoc> = {
  name: "purchase_conduct",
  handles: ["CreationConfirmed", "CreationUnverified"],
  keysOf(e) {
    const l = landingOf(e);
    return l ? [[l.purchaseId]] : [];
  },
  evolve(doc, e) {
    const l = landingOf(e);
    if (!l) return doc;
    const { purchaseId: _, ...landing } = l;
    return withLanding(doc, landing);
  },
};
