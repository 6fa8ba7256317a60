/**
 * The reconciliation's smaller tables, written after the builds table from what it added up and
 * from the audit's state: the totals per key (every key issued, and any key builds name that was
 * never issued) and per UTC day, and the access purchases. They are the same whether the builds
 * table was written in full or spliced, so they stand apart from both (and from `runAudit`, which
 * keeps the order of the audit's steps).
 */
import { listDocs } from "../commands/read.ts";
import { keysProjection, keyStatus } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { purchaseFields } from "../domain/access/purchase-view.ts";
import { type BuildTotals, iso, type Raise } from "./build-table.ts";
import type { AuditSink, Row } from "./sink.ts";
import { type Totals, zero } from "./totals.ts";

/** The totals columns of a row (lamports as decimal strings, USD from cents). */
export const totalsRow = (t: Totals): Row => ({
  builds: t.builds,
  open: t.open,
  confirmed: t.confirmed,
  unverified: t.unverified,
  failed: t.failed,
  expired: t.expired,
  landedQuotedLamports: t.landedQuotedLamports.toString(),
  collectedLamports: t.collectedLamports.toString(),
  shortfallLamports: t.shortfallLamports.toString(),
  confirmedFeeUsd: t.confirmedFeeCents / 100,
});

/**
 * `totals_by_key`, every key in the state's order and then the keys builds name that were never
 * issued (each also an exception), and `totals_by_day` in day order. Returns how many keys were
 * issued.
 */
export async function writeTotalsTables(
  state: Deno.Kv,
  sink: AuditSink,
  totals: BuildTotals,
  raise: Raise,
): Promise<number> {
  // `byKey` is only read: runAudit saves it in the tables index afterwards (saveTablesIndex).
  let keys = 0;
  const issued = new Set<string>();
  for await (const k of listDocs(state, keysProjection, [], { batchSize: 500 })) {
    keys++;
    const t = totals.byKey.get(k.keyId) ?? zero();
    issued.add(k.keyId);
    await sink.write("totals_by_key", {
      keyId: k.keyId,
      purchaseId: k.purchaseId,
      wallet: k.wallet,
      keyStatus: keyStatus(k),
      unverifiedCount: k.unverifiedCount,
      ...totalsRow(t),
    });
  }
  for (const [keyId, t] of totals.byKey) {
    if (issued.has(keyId)) continue;
    await sink.write("totals_by_key", {
      keyId,
      purchaseId: null,
      wallet: null,
      keyStatus: "unknown",
      unverifiedCount: null,
      ...totalsRow(t),
    });
    await raise("build_for_unknown_key", `${t.builds} build(s) by key ${keyId}, never issued`, {
      keyId,
    });
  }
  for (const day of [...totals.byDay.keys()].sort()) {
    await sink.write("totals_by_day", { day, ...totalsRow(totals.byDay.get(day)!) });
  }
  return keys;
}

/** What the summary says of the access purchases. */
export interface PurchasesSummary {
  total: number;
  paid: number;
  /** Paid amounts by currency, in its smallest unit, as decimal strings. */
  paidByCurrency: Record<string, string>;
}

/** `purchases`, every access purchase in the state, with what the summary says of them. */
export async function writePurchasesTable(
  state: Deno.Kv,
  sink: AuditSink,
): Promise<PurchasesSummary> {
  let total = 0;
  let paid = 0;
  const paidByCurrency: Record<string, bigint> = {};
  for await (const p of listDocs(state, purchasesProjection, [], { batchSize: 500 })) {
    total++;
    if (p.status === "paid") {
      paid++;
      paidByCurrency[p.currency] = (paidByCurrency[p.currency] ?? 0n) + BigInt(p.amount);
    }
    // The fields every reader of a purchase shows, with the wallet in the column it always had.
    const { purchaseId, ...shown } = purchaseFields(p, iso);
    await sink.write("purchases", {
      purchaseId,
      wallet: p.wallet,
      ...shown,
      activeKeyId: p.activeKeyId,
      keyIds: p.keyIds.join(" "),
    });
  }
  return {
    total,
    paid,
    paidByCurrency: Object.fromEntries(
      Object.entries(paidByCurrency).map(([c, v]) => [c, v.toString()]),
    ),
  };
}
