/**
 * The full audit's replay: the whole log up to the head read first (H0), in three passes.
 *
 * 1. **touches**: where each document's last event is (fold.ts `LastTouches`);
 * 2. **live**: the live projections listed once into a digest (digest.ts), the moved ones noted
 *    (live.ts), then the log followed past H0;
 * 3. **fold**: the log again, hash chain checked event by event, every projection rebuilt and its
 *    documents added to a second digest as they close; the keys, purchases and the audit's builds
 *    go to the state for the tables.
 *
 * Equal digests mean equal projections; moved documents are settled one by one. A projection
 * whose digests differ is compared document by document (`namesEveryMismatch`), which names each
 * differing document. All of it runs on one thread: it meets its bounds without a worker.
 */
import type { LogHead } from "../../events/keys.ts";
import { readLog } from "../../events/log.ts";
import { allProjections } from "../../projections/index.ts";
import { keysProjection } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { digestKey, Digests } from "./digest.ts";
import { Fold, type Folded, keyText, LastTouches, Touches } from "./fold.ts";
import { AUDIT_BUILD, auditBuildProjection } from "./folds.ts";
import { updatesProjection } from "../../projections/updates.ts";
import { type ChainVerification, ChainVerifier, checkNothingAfter } from "./log-chain.ts";
import { type AuditHead, LiveSide, type Mismatch, readAuditHead, sameDoc } from "./live.ts";
import type { AuditProgress } from "./progress.ts";
import { StateWriter } from "./state.ts";

/** The folds the tables are written from, kept in the state. */
export const STATE_FOLDS: ReadonlySet<string> = new Set([
  AUDIT_BUILD,
  keysProjection.name,
  purchasesProjection.name,
  updatesProjection.name,
]);

/** Every fold the audit runs: the service's projections and the audit's own builds. */
export const auditFolds = () => new Touches([...allProjections, auditBuildProjection]);

/** The service's projections alone: what the live side holds. */
export const liveFolds = () => new Touches(allProjections);

export interface ReplayOptions {
  kv: Deno.Kv;
  state: Deno.Kv;
  onProgress?: (p: AuditProgress) => void;
  /** Events between two progress lines. */
  progressEvery: number;
  /** Tests: called after each pass, to change the KV between them. */
  onPass?: (pass: "touches" | "live" | "fold") => void | Promise<void>;
}

export interface Replayed {
  head: LogHead | null;
  chain: ChainVerification;
  /** Projection documents compared. */
  documents: number;
  mismatches: Mismatch[];
  compared: "digest" | "documents" | "incremental";
  /** Documents the service changed while the audit ran, each settled against the log. */
  moved: number;
  passesMs: Record<string, number>;
}

/** Reads the log up to the audit's head, a batch at a time, with a progress line every so often. */
export async function* eventsTo(at: AuditHead, o: ReplayOptions, pass: string) {
  const of = at.head?.position ?? 0;
  let next = o.progressEvery;
  for await (const batch of readLog(o.kv, { head: at.head, to: of })) {
    for (const { event, body } of batch) {
      yield { event, body };
      if (event.position >= next) {
        o.onProgress?.({ step: "events", pass, done: event.position, of });
        next += o.progressEvery;
      }
    }
  }
}

export async function replayFull(o: ReplayOptions): Promise<Replayed> {
  const at = await readAuditHead(o.kv);
  const touches = auditFolds();
  const passesMs: Record<string, number> = {};
  const timed = async (pass: "touches" | "live" | "fold", run: () => Promise<void>) => {
    const t0 = performance.now();
    await run();
    passesMs[pass] = performance.now() - t0;
    await o.onPass?.(pass);
  };

  const last = new LastTouches();
  await timed("touches", async () => {
    for await (const { event } of eventsTo(at, o, "touches")) {
      last.note(touches.ofOrNone(event), event.position);
    }
  });

  const key = digestKey();
  const live = new LiveSide(o.kv, at, liveFolds());
  const liveDigest = new Digests(key);
  await timed("live", async () => {
    await live.digestAll(liveDigest);
    await live.follow();
  });

  const verifier = new ChainVerifier();
  const rebuilt = new Digests(key);
  const atHead = new Map<string, Folded>();
  const state = new StateWriter(o.state);
  const fold = new Fold(touches, async (d) => {
    if (STATE_FOLDS.has(d.fold)) await state.put(d.key, d.doc);
    if (d.fold === AUDIT_BUILD) return;
    if (live.moved.has(d.id)) atHead.set(d.id, d);
    else rebuilt.add(d.fold, d.id, d.doc);
  }, { last, onError: foldProblem(verifier) });
  await timed("fold", async () => {
    for await (const r of eventsTo(at, o, "fold")) {
      verifier.checkRead(r);
      await fold.apply(r.event);
    }
    await fold.finish();
    await state.flush();
  });
  const chain = verifier.finish(at.head);
  await checkNothingAfter(o.kv, at.head, chain);

  const t0 = performance.now();
  const mismatches: Mismatch[] = [];
  for (const [id, key] of live.moved) {
    const m = await live.settle(key, id, atHead.get(id)?.doc ?? null);
    if (m) mismatches.push(m);
  }
  passesMs.settle = performance.now() - t0;
  const moved = new Set(live.moved.keys());
  const differing = rebuilt.differing(liveDigest);
  if (differing.length) {
    const t1 = performance.now();
    mismatches.push(...await namesEveryMismatch(o, at, live, new Set(differing), moved));
    passesMs.documents = performance.now() - t1;
  }
  return {
    head: at.head,
    chain,
    documents: rebuilt.count + [...atHead.values()].filter((d) => d.doc !== null).length,
    mismatches: mismatches.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    compared: differing.length ? "documents" : "digest",
    moved: moved.size,
    passesMs,
  };
}

/** A fold that throws on an event (a tampered one) is a broken chain at that event. */
export const foldProblem = (verifier: ChainVerifier) => (position: number, e: unknown) =>
  verifier.problems.push({
    position,
    problem: `the event cannot be folded: ${(e as Error)?.message ?? String(e)}`,
  });

/**
 * The projections in `names` rebuilt again, each document compared with the live one as it
 * closes (ten to a read), then every live document of theirs that no event made. `settled`
 * documents (the moved ones) were settled already; any other difference is settled too before it
 * is named (the service may have moved the document since the live pass read it).
 */
async function namesEveryMismatch(
  o: ReplayOptions,
  at: AuditHead,
  live: LiveSide,
  names: ReadonlySet<string>,
  settled: ReadonlySet<string>,
): Promise<Mismatch[]> {
  const touches = new Touches(allProjections.filter((f) => names.has(f.name)));
  const last = new LastTouches();
  for await (const { event } of eventsTo(at, o, "documents")) {
    last.note(touches.ofOrNone(event), event.position);
  }
  const rebuiltIds = new Set<string>();
  const suspects: Folded[] = [];
  let pending: Folded[] = [];
  const compare = async () => {
    const values = await live.read(pending.map((d) => d.key));
    pending.forEach((d, i) => {
      if (!settled.has(d.id) && !sameDoc(values[i], d.doc)) suspects.push(d);
    });
    pending = [];
  };
  const fold = new Fold(touches, async (d) => {
    rebuiltIds.add(d.id);
    pending.push(d);
    if (pending.length >= 10) await compare();
  }, { last });
  for await (const { event } of eventsTo(at, o, "documents")) await fold.apply(event);
  await fold.finish();
  await compare();
  for (const name of names) {
    for await (const e of o.kv.list({ prefix: ["p", name] }, { batchSize: 1000 })) {
      const id = keyText(e.key);
      if (!rebuiltIds.has(id) && !settled.has(id)) {
        suspects.push({ key: e.key, id, fold: name, doc: null });
      }
    }
  }
  const out: Mismatch[] = [];
  for (const d of suspects) {
    const m = await live.settle(d.key, d.id, d.doc);
    if (m) out.push(m);
  }
  return out;
}
