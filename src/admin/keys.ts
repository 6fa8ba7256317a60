/**
 * What operators see of keys and purchases, and the ban/lift commands. Views never carry the
 * secret's keyed hash: an operator tool has no use for it and a leaked listing must not help
 * anyone test guesses offline.
 */
import { projectionKey } from "../../events/keys.ts";
import type { EventStore } from "../../events/store.ts";
import type { StoredEvent } from "../../events/types.ts";
import { type KeyDoc, keyStatus } from "../../projections/keys.ts";
import type { PurchaseDoc } from "../../projections/purchases.ts";
import { handleAccess } from "../domain/access/handle.ts";
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

async function page<D, V>(
  kv: Deno.Kv,
  name: string,
  view: (d: D) => V,
  keep: (v: V) => boolean,
  opts: ListOptions,
): Promise<Page<V>> {
  const limit = Math.min(Math.max(1, opts.limit ?? 100), MAX_PAGE);
  const items: V[] = [];
  // Filters apply after the read, so a page is read in slices until it is full or the list ends.
  let cursor = opts.cursor || undefined;
  while (items.length < limit) {
    const want = limit - items.length;
    const iter = kv.list<D>({ prefix: projectionKey(name, []) }, { limit: want, cursor });
    let n = 0;
    for await (const e of iter) {
      n++;
      const v = view(e.value);
      if (keep(v)) items.push(v);
    }
    if (n < want) return { items, cursor: null };
    cursor = iter.cursor;
  }
  return { items, cursor: cursor ?? null };
}

export function listKeys(kv: Deno.Kv, opts: ListOptions = {}): Promise<Page<KeyView>> {
  return page<KeyDoc, KeyView>(
    kv,
    "key",
    keyView,
    (k) => (!opts.status || k.status === opts.status) && (!opts.wallet || k.wallet === opts.wallet),
    opts,
  );
}

export function listPurchases(kv: Deno.Kv, opts: ListOptions = {}): Promise<Page<PurchaseView>> {
  return page<PurchaseDoc, PurchaseView>(
    kv,
    "purchase",
    purchaseView,
    (p) => !opts.wallet || p.wallet === opts.wallet,
    opts,
  );
}

export async function getKey(kv: Deno.Kv, keyId: string): Promise<KeyView | null> {
  const doc = (await kv.get<KeyDoc>(projectionKey("key", [keyId]))).value;
  return doc ? keyView(doc) : null;
}

/** Bans a key (401 from then on). Banning a banned key changes nothing. Throws 404 if unknown. */
export async function banKey(
  store: EventStore,
  keyId: string,
  reason: string,
): Promise<{ key: KeyView; events: StoredEvent[] }> {
  const events = await handleAccess(store, { type: "BanKey", keyId, reason });
  return { key: (await getKey(store.kv, keyId))!, events };
}

/** Lifts a ban or a suspension. Lifting a usable key changes nothing. Throws 404 if unknown. */
export async function liftBan(
  store: EventStore,
  keyId: string,
): Promise<{ key: KeyView; events: StoredEvent[] }> {
  const events = await handleAccess(store, { type: "LiftBan", keyId });
  return { key: (await getKey(store.kv, keyId))!, events };
}
