/**
 * The read models admin uses: the key a command names (read inside the command, under the head
 * guard), and the operator's listings of keys and purchases (plain KV reads, a page at a time).
 */
import type { Tx } from "../../events/store.ts";
import type { Projection } from "../../events/projection.ts";
import { keysProjection } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { keyOf, kvReads, read } from "../commands/read.ts";
import type { AdminCommand, AdminState } from "./decide.ts";
import {
  type KeyView,
  keyView,
  type ListOptions,
  MAX_PAGE,
  type Page,
  type PurchaseView,
  purchaseView,
} from "./keys.ts";

export async function loadAdmin(tx: Tx, cmd: AdminCommand): Promise<AdminState> {
  return { key: await read(tx, keysProjection, [cmd.keyId]) };
}

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
