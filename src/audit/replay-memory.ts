/**
 * Replay with every rebuilt document in memory: the simplest exact comparison, for tests and the
 * benchmark's small logs. The audit (replay.ts) holds a document only while it is open.
 */
import { canonicalJson } from "../../events/hash.ts";
import { HEAD, type LogHead, projectionKey, PROJECTIONS } from "../../events/keys.ts";
import { readLog } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";
import type { Projection } from "../../events/projection.ts";
import { type ChainVerification, ChainVerifier, checkNothingAfter } from "./log-chain.ts";
import { keyText as keyId } from "./fold.ts";

export interface ProjectionMismatch {
  key: string;
  live: unknown;
  rebuilt: unknown;
}

/** Projection documents held in memory during a rebuild, keyed like the live KV. */
export class ProjectionBuffer {
  readonly docs = new Map<string, { key: Deno.KvKey; doc: unknown }>();

  apply(projections: Projection[], e: StoredEvent): void {
    for (const p of projections) {
      for (const sub of p.keysOf(e)) {
        const key = projectionKey(p.name, sub);
        const id = keyId(key);
        const prev = this.docs.get(id)?.doc ?? null;
        const next = p.evolve(prev as never, e, sub);
        if (next === null) this.docs.delete(id);
        else this.docs.set(id, { key, doc: next });
      }
    }
  }
}

export interface ReplayReport {
  chain: ChainVerification;
  documents: number;
  mismatches: ProjectionMismatch[];
  equal: boolean;
}

/** Rebuilds from the log of `source` and compares with the projections stored in `source`. */
export async function replayAndCompare(
  source: Deno.Kv,
  projections: Projection[],
): Promise<ReplayReport> {
  const verifier = new ChainVerifier();
  const buffer = new ProjectionBuffer();
  const head = (await source.get<LogHead>(HEAD)).value;
  for await (const batch of readLog(source, { head })) {
    for (const r of batch) {
      verifier.checkRead(r);
      buffer.apply(projections, r.event);
    }
  }
  const chain = verifier.finish(head);
  await checkNothingAfter(source, head, chain);
  const mismatches: ProjectionMismatch[] = [];
  const seen = new Set<string>();
  for await (const entry of source.list({ prefix: PROJECTIONS }, { batchSize: 1000 })) {
    const id = keyId(entry.key);
    seen.add(id);
    const rebuilt = buffer.docs.get(id)?.doc;
    if (rebuilt === undefined || canonicalJson(rebuilt) !== canonicalJson(entry.value)) {
      mismatches.push({ key: id, live: entry.value, rebuilt: rebuilt ?? null });
    }
  }
  for (const [id, { doc }] of buffer.docs) {
    if (!seen.has(id)) mismatches.push({ key: id, live: null, rebuilt: doc });
  }
  return {
    chain,
    documents: buffer.docs.size,
    mismatches,
    equal: mismatches.length === 0 && chain.ok,
  };
}
