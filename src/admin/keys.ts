/**
 * What operators see of keys and purchases, and the ban/lift commands. Views never carry the
 * secret's keyed hash: an operator tool has no use for it and a leaked listing must not help
 * anyone test guesses offline.
 */
import type { EventStore } from "../../events/store.ts";
import type { Projection } from "../../events/projection.ts";
import type { StoredEvent } from "../../events/types.ts";
import { type KeyDoc, keysProjection, keyStatus } from "../../projections/keys.ts";
import { type PurchaseDoc, purchasesProjection } from "../../projections/purchases.ts";
import { keyOf, kvReads, read } from "../commands/read.ts";
import { type Clock, systemClock } from "../kernel/clock.ts";
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
  projection: Projection<D>,
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
    const iter = kv.list<D>({ prefix: keyOf(projection, []) }, { limit: want, cursor });
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
  return page(
    kv,
    keysProjection,
    keyView,
    (k) => (!opts.status || k.status === opts.status) && (!opts.wallet || k.wallet === opts.wallet),
    opts,
  );
}

export function listPurchases(kv: Deno.Kv, opts: ListOptions = {}): Promise<Page<PurchaseView>> {
  return page(
    kv,
    purchasesProjection,
    purchaseView,
    (p) => !opts.wallet || p.wallet === opts.wallet,
    opts,
  );
}

export async function getKey(kv: Deno.Kv, keyId: string): Promise<KeyView | null> {
  const doc = await read(kvReads(kv), keysProjection, [keyId]);
  return doc ? keyView(doc) : null;
}

/** Bans a key (401 from then on). Banning a banned key changes nothing. Throws 404 if unknown. */
export async function banKey(
  store: EventStore,
  keyId: string,
  reason: string,
  clock: Clock = systemClock,
): Promise<{ key: KeyView; events: StoredEvent[] }> {
  const events = await handleAccess(store, { type: "BanKey", keyId, reason }, clock);
  return { key: (await getKey(store.kv, keyId))!, events };
}

/** Lifts a ban or a suspension. Lifting a usable key changes nothing. Throws 404 if unknown. */
export async function liftBan(
  store: EventStore,
  keyId: string,
  clock: Clock = systemClock,
): Promise<{ key: KeyView; events: StoredEvent[] }> {
  const events = await handleAccess(store, { type: "LiftBan", keyId }, clock);
  return { key: (await getKey(store.kv, keyId))!, events };
}
