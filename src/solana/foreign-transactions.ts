/**
 * Transactions that carry one of our reference keys (or a build's mint) without being signed by
 * the payer they belong to. Anyone can put any account, read-only, into a transaction of their
 * own, so such a transaction says nothing about a build or a purchase: it is ignored, logged once
 * and counted once. The note doubles as a memo, so a paged lookup does not read the same foreign
 * transaction again on every pass. Operational state, not a fact of the log: it expires, and a
 * lost note only costs one more read.
 */
import type { Logger } from "../kernel/logger.ts";

const NOTE = "foreign_tx";
const COUNT = ["foreign_tx_count"] as const;
const KEEP_MS = 7 * 24 * 3600 * 1000;
/** Deno KV's getMany limit. */
const GET_MANY = 10;

export interface ForeignTransaction {
  signature: string;
  /** The reference or mint it carried. */
  address: string;
  /** Who it would have been about. */
  buildId?: number;
  purchaseId?: string;
  /** Its signers, so the log shows who sent it. */
  signers: string[];
}

/** The signatures among `signatures` already known to be foreign. */
export async function knownForeign(kv: Deno.Kv, signatures: string[]): Promise<Set<string>> {
  const known = new Set<string>();
  for (let i = 0; i < signatures.length; i += GET_MANY) {
    const chunk = signatures.slice(i, i + GET_MANY);
    const entries = await kv.getMany(chunk.map((sig) => [NOTE, sig]));
    entries.forEach((e, j) => {
      if (e.versionstamp !== null) known.add(chunk[j]);
    });
  }
  return known;
}

/** Records a foreign transaction: the first time it is seen it is logged and counted. */
export async function noteForeign(
  kv: Deno.Kv,
  logger: Logger,
  f: ForeignTransaction,
): Promise<void> {
  const key = [NOTE, f.signature];
  const res = await kv.atomic()
    .check({ key, versionstamp: null })
    .set(
      key,
      { address: f.address, buildId: f.buildId ?? null, purchaseId: f.purchaseId ?? null },
      {
        expireIn: KEEP_MS,
      },
    )
    .sum([...COUNT], 1n)
    .commit();
  if (res.ok) {
    logger.log("warn", "ignored a transaction not signed by the payer it names", {
      signature: f.signature,
      address: f.address,
      buildId: f.buildId,
      purchaseId: f.purchaseId,
      signers: f.signers,
    });
  }
}

/** How many foreign transactions have been seen (each once). */
export async function foreignCount(kv: Deno.Kv): Promise<number> {
  const v = (await kv.get<Deno.KvU64>([...COUNT])).value;
  return v ? Number(v.value) : 0;
}
