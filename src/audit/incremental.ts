/**
 * The incremental audit (`--from`): only the documents the events after the checkpoint touch are
 * rebuilt and compared, and the state the tables are written from is brought up to the head.
 *
 * 1. The new events (after the checkpoint, up to the head read first, H0) name the documents they
 *    touch.
 * 2. One pass over the whole log checks the hash chain (so an event changed before the checkpoint
 *    is found, at its position) and the event at the checkpoint must still carry the hash it had;
 *    it folds only the touched documents.
 * 3. Each touched projection document is compared with the live one (settled as live.ts says
 *    when it moved), and the touched documents of the state are written to it.
 *
 * Documents no new event touched were compared by the audit that wrote the checkpoint.
 */
import { readLog } from "../../events/log.ts";
import { Fold, type Folded } from "./fold.ts";
import { AUDIT_BUILD } from "./folds.ts";
import { ChainVerifier, checkNothingAfter } from "./log-chain.ts";
import { LiveSide, type Mismatch, readAuditHead, sameDoc } from "./live.ts";
import {
  auditFolds,
  eventsTo,
  foldProblem,
  liveFolds,
  type Replayed,
  type ReplayOptions,
  STATE_FOLDS,
} from "./replay.ts";
import {
  type Checkpoint,
  MAX_INCREMENTAL_EVENTS,
  StateWriter,
  TooFarBehindError,
} from "./state.ts";

export async function replayFrom(o: ReplayOptions, from: Checkpoint): Promise<Replayed> {
  const at = await readAuditHead(o.kv);
  const to = at.head?.position ?? 0;
  if (to - from.position > MAX_INCREMENTAL_EVENTS) throw new TooFarBehindError(to - from.position);
  const touches = auditFolds();
  const passesMs: Record<string, number> = {};
  let t0 = performance.now();

  const touched = new Map<string, Deno.KvKey>();
  if (to > from.position) {
    for await (const batch of readLog(o.kv, { from: from.position + 1, to })) {
      for (const { event } of batch) {
        for (const t of touches.ofOrNone(event)) touched.set(t.id, t.key);
      }
    }
  }
  passesMs.touches = performance.now() - t0;
  await o.onPass?.("touches");

  t0 = performance.now();
  const verifier = new ChainVerifier();
  const docs: Folded[] = [];
  const fold = new Fold(touches, (d) => {
    docs.push(d);
  }, { only: new Set(touched.keys()), onError: foldProblem(verifier) });
  for await (const r of eventsTo(at, o, "fold")) {
    verifier.checkRead(r);
    if (r.event.position === from.position && r.event.hash !== from.hash) {
      verifier.problems.push({
        position: from.position,
        problem: `the event at the checkpoint (${from.position}) no longer has the hash it had`,
      });
    }
    await fold.apply(r.event);
  }
  await fold.finish();
  if (to < from.position) {
    verifier.problems.push({
      position: to,
      problem: `the log ends at ${to}, before the checkpoint at ${from.position}`,
    });
  }
  const chain = verifier.finish(at.head);
  await checkNothingAfter(o.kv, at.head, chain);
  passesMs.fold = performance.now() - t0;
  await o.onPass?.("fold");

  t0 = performance.now();
  const live = new LiveSide(o.kv, at, liveFolds());
  const compared = docs.filter((d) => d.fold !== AUDIT_BUILD);
  const values = await live.read(compared.map((d) => d.key));
  await o.onPass?.("live");
  await live.follow(new Set(touched.keys()));
  const mismatches: Mismatch[] = [];
  for (const [i, d] of compared.entries()) {
    const m = live.moved.has(d.id)
      ? await live.settle(d.key, d.id, d.doc)
      : sameDoc(values[i], d.doc)
      ? null
      : { id: d.id, live: values[i], rebuilt: d.doc };
    if (m) mismatches.push(m);
  }
  const state = new StateWriter(o.state);
  for (const d of docs) if (STATE_FOLDS.has(d.fold)) await state.put(d.key, d.doc);
  await state.flush();
  passesMs.settle = performance.now() - t0;

  return {
    head: at.head,
    chain,
    documents: compared.length,
    mismatches: mismatches.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    compared: "incremental",
    moved: live.moved.size,
    passesMs,
  };
}
