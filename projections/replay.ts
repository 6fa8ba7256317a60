/**
 * Replay: rebuild every projection from the log alone and compare it with the live one.
 * The log is streamed and verified link by link, so memory stays bounded by the projections,
 * not by the length of the history.
 */
import { canonicalJson, eventHash, GENESIS_HASH } from "../events/hash.ts";
import { HEAD, LOG, type LogHead, PROJECTIONS, projectionKey } from "../events/keys.ts";
import type { StoredEvent } from "../events/types.ts";
import type { Projection } from "./projection.ts";

export interface ChainProblem {
  position: number;
  problem: string;
}

export interface ChainVerification {
  ok: boolean;
  events: number;
  problems: ChainProblem[];
}

/** Walks events in order and checks positions, links and hashes. */
export class ChainVerifier {
  #expected = 1;
  #prevHash = GENESIS_HASH;
  readonly problems: ChainProblem[] = [];
  count = 0;

  async check(e: StoredEvent): Promise<void> {
    this.count++;
    if (e.position !== this.#expected) {
      this.problems.push({
        position: e.position,
        problem: e.position > this.#expected
          ? `events ${this.#expected}..${e.position - 1} are missing`
          : `position ${e.position} out of order`,
      });
    }
    if (e.prevHash !== this.#prevHash) {
      this.problems.push({ position: e.position, problem: "prevHash does not link to the previous event" });
    }
    const { hash, ...rest } = e;
    if ((await eventHash(rest)) !== hash) {
      this.problems.push({ position: e.position, problem: "hash does not match the event's content" });
    }
    this.#expected = e.position + 1;
    this.#prevHash = hash;
  }

  finish(head: LogHead | null): ChainVerification {
    const h = head ?? { position: 0, hash: GENESIS_HASH };
    if (h.position !== this.#expected - 1 || h.hash !== this.#prevHash) {
      this.problems.push({
        position: h.position,
        problem: `log head (${h.position}) does not match the last event (${this.#expected - 1})`,
      });
    }
    return { ok: this.problems.length === 0, events: this.count, problems: this.problems };
  }
}

export async function verifyChain(kv: Deno.Kv): Promise<ChainVerification> {
  const v = new ChainVerifier();
  for await (const entry of kv.list<StoredEvent>({ prefix: LOG }, { batchSize: 1000 })) {
    await v.check(entry.value);
  }
  return v.finish((await kv.get<LogHead>(HEAD)).value);
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

export const keyId = (key: Deno.KvKey) =>
  JSON.stringify(key, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));

export interface ProjectionMismatch {
  key: string;
  live: unknown;
  rebuilt: unknown;
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
  for await (const entry of source.list<StoredEvent>({ prefix: LOG }, { batchSize: 1000 })) {
    await verifier.check(entry.value);
    buffer.apply(projections, entry.value);
  }
  const chain = verifier.finish((await source.get<LogHead>(HEAD)).value);
  const mismatches: ProjectionMismatch[] = [];
  const seen = new Set<string>();
  for await (const entry of source.list({ prefix: PROJECTIONS }, { batchSize: 1000 })) {
    const id = keyId(entry.key);
    seen.add(id);
    const rebuilt = buffer.docs.get(id)?.doc;
    if (rebuilt === undefined || canonical(rebuilt) !== canonical(entry.value)) {
      mismatches.push({ key: id, live: entry.value, rebuilt: rebuilt ?? null });
    }
  }
  for (const [id, { doc }] of buffer.docs) {
    if (!seen.has(id)) mismatches.push({ key: id, live: null, rebuilt: doc });
  }
  return { chain, documents: buffer.docs.size, mismatches, equal: mismatches.length === 0 && chain.ok };
}

/** Writes a rebuilt projection set into a fresh KV, so it can be served or diffed there. */
export async function writeProjections(target: Deno.Kv, buffer: ProjectionBuffer): Promise<void> {
  let atomic = target.atomic();
  let n = 0;
  for (const { key, doc } of buffer.docs.values()) {
    atomic.set(key, doc);
    if (++n % 500 === 0) {
      await atomic.commit();
      atomic = target.atomic();
    }
  }
  await atomic.commit();
}

const canonical = canonicalJson;
