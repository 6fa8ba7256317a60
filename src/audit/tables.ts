/**
 * The reconciliation tables, written from the audit's state after the replay: every build in build
 * order (with `--verify-chain`, each landed creation read back from the chain, a few at a time),
 * the exceptions each build raises, then the totals per key and per day and the purchases.
 */
import { listDocs } from "../commands/read.ts";
import { type ChainCheck, checkOnChain, type TxReader } from "./chain-check.ts";
import { buildExceptions, buildRow, BuildTotals, type Raise } from "./build-table.ts";
import { type AuditBuildDoc, auditBuildProjection } from "./folds.ts";
import type { AuditSink } from "./sink.ts";
import { type PurchasesSummary, writePurchasesTable, writeTotalsTables } from "./totals-tables.ts";
import { type UpdatesSummary, writeUpdatesTable } from "./update-table.ts";

export interface Tables {
  totals: BuildTotals;
  keys: number;
  purchases: PurchasesSummary;
  /** Token updates, and their fees. */
  updates: UpdatesSummary;
  /** Creations read back from the chain (null: `--verify-chain` was off). */
  verified: number | null;
}

export async function writeTables(
  state: Deno.Kv,
  sink: AuditSink,
  raise: Raise,
  opts: { readTx: TxReader | null; concurrency: number },
): Promise<Tables> {
  const totals = new BuildTotals();
  let verified = 0;
  let pending: AuditBuildDoc[] = [];
  const drain = async () => {
    const checks = await Promise.all(pending.map((b) => check(opts.readTx, b)));
    for (const [i, b] of pending.entries()) {
      if (checks[i]) verified++;
      await sink.write("builds", buildRow(b, checks[i]));
      totals.count(b);
      for (const [kind, detail, where] of buildExceptions(b, checks[i])) {
        await raise(kind, detail, where);
      }
    }
    pending = [];
  };
  for await (const b of listDocs(state, auditBuildProjection, [], { batchSize: 500 })) {
    pending.push(b);
    if (pending.length >= (opts.readTx ? opts.concurrency : 500)) await drain();
  }
  await drain();
  const keys = await writeTotalsTables(state, sink, totals, raise);
  const purchases = await writePurchasesTable(state, sink);
  const updates = await writeUpdatesTable(state, sink, raise);
  return { totals, keys, purchases, updates, verified: opts.readTx ? verified : null };
}

/** What the chain says of a landed creation; null when there is nothing to check. */
function check(readTx: TxReader | null, b: AuditBuildDoc): Promise<ChainCheck | null> {
  if (
    readTx === null || b.signature === null || b.treasury === null ||
    (b.status !== "confirmed" && b.status !== "unverified")
  ) return Promise.resolve(null);
  return checkOnChain(readTx, {
    signature: b.signature,
    mint: b.mint,
    payer: b.payer,
    treasury: b.treasury,
    status: b.status,
    quotedLamports: b.quotedLamports,
    feeSeenLamports: b.feeSeenLamports,
  });
}
