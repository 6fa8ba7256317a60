/**
 * The audit's updates table: every token update (POST /v1/tokens/{mint}/update) from its record
 * in the audit's state, with its fee as quoted and as the landed transaction paid it, and the
 * totals the summary shows. A landed update that paid less than it quoted is an exception.
 */
import { listDocs } from "../commands/read.ts";
import { type UpdateDoc, updatesProjection } from "../../projections/updates.ts";
import { iso, type Raise } from "./build-table.ts";
import type { AuditSink, Row } from "./sink.ts";

export const UPDATE_COLUMNS = [
  "updateId",
  "buildId",
  "keyId",
  "mint",
  "tokenProgram",
  "authority",
  "changes",
  "status",
  "signature",
  "feeLamports",
  "feeLamportsSeen",
  "feeUsd",
  "solUsd",
  "rentTopUpLamports",
  "totalLamports",
  "createdAt",
  "landedAt",
];

export interface UpdatesSummary {
  updates: number;
  landed: number;
  failed: number;
  /** Fees the landed updates quoted, and what they paid the treasury (lamports). */
  landedQuotedLamports: string;
  collectedLamports: string;
}

export const updateRow = (u: UpdateDoc): Row => ({
  updateId: u.updateId,
  buildId: u.buildId,
  keyId: u.keyId,
  mint: u.mint,
  tokenProgram: u.tokenProgram,
  authority: u.authority,
  changes: u.changes.join(" "),
  status: u.status,
  signature: u.signature,
  feeLamports: u.feeLamports,
  feeLamportsSeen: u.feeLamportsSeen,
  feeUsd: u.feeUsd,
  solUsd: u.solUsd,
  rentTopUpLamports: u.rentTopUpLamports,
  totalLamports: u.totalLamports,
  createdAt: iso(u.createdAt * 1000),
  landedAt: iso(u.landedAt === null ? null : u.landedAt * 1000),
});

export async function writeUpdatesTable(
  state: Deno.Kv,
  sink: AuditSink,
  raise: Raise,
): Promise<UpdatesSummary> {
  let updates = 0, landed = 0, failed = 0, quoted = 0n, collected = 0n;
  for await (const u of listDocs(state, updatesProjection, [], { batchSize: 500 })) {
    updates++;
    await sink.write("updates", updateRow(u));
    if (u.status === "failed") failed++;
    if (u.status !== "landed") continue;
    landed++;
    const seen = BigInt(u.feeLamportsSeen ?? "0");
    quoted += BigInt(u.feeLamports);
    collected += seen;
    if (seen < BigInt(u.feeLamports)) {
      await raise(
        "short_fee_update",
        `update ${u.updateId} landed paying ${seen} of the ${u.feeLamports} lamports quoted`,
        { buildId: u.buildId, keyId: u.keyId, mint: u.mint, signature: u.signature },
      );
    }
  }
  return {
    updates,
    landed,
    failed,
    landedQuotedLamports: quoted.toString(),
    collectedLamports: collected.toString(),
  };
}
