/**
 * The event-store measurements that need a process of their own: writing the synthetic log
 * (which holds a lot in memory) and each replay (so its peak RSS is its own, not the bench's).
 * Prints one JSON line on stdout.
 *
 *   events-child.ts write  <kv path> <events>
 *   events-child.ts append <kv path> <events> <skip>
 *   events-child.ts replay <kv path> list|floor|all|bytes|verify|memory
 */
import { HEAD, LOG_SEGMENTS, LOG_TAIL, PROJECTIONS } from "../../events/keys.ts";
import { readLog } from "../../events/log.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { verifyChain } from "../../src/audit/log-chain.ts";
import { profile, renderHotSpots } from "./profiler.ts";
import { peakRssMiB, rssSampler } from "./stats.ts";
import { syntheticCommits, writeSyntheticLog } from "./synthetic-log.ts";
import { EventStore } from "../../events/store.ts";

const [cmd, path, arg] = Deno.args;

if (cmd === "append") {
  // Carries the synthetic history on through the real store: `append <kv> <events> <skip>`
  // appends the `events` that follow the first `skip` of the same seeded history.
  const kv = await Deno.openKv(path);
  const store = new EventStore(kv, { projections: allProjections });
  const want = Number(arg);
  const skip = Number(Deno.args[3] ?? 0);
  let seen = 0;
  let appended = 0;
  const t0 = performance.now();
  for (const { commit } of syntheticCommits(skip + want)) {
    const n = commit.reduce((k, c) => k + c.events.length, 0);
    seen += n;
    if (seen <= skip) continue;
    await store.append(commit.map((c) => ({
      stream: c.stream,
      expectedVersion: "any" as const,
      events: c.events,
    })));
    appended += n;
  }
  const ms = performance.now() - t0;
  kv.close();
  console.log(JSON.stringify({ appended, ms, perSecond: appended / (ms / 1000) }));
} else if (cmd === "write") {
  const kv = await Deno.openKv(path);
  const r = await writeSyntheticLog(kv, Number(arg), {
    onProgress: (n) => console.error(`  wrote ${n} events`),
  });
  kv.close();
  console.log(JSON.stringify(r));
} else if (cmd === "replay") {
  const kv = await Deno.openKv(path);
  const baseRss = peakRssMiB() ?? 0;
  const sampler = rssSampler(25);
  const t0 = performance.now();
  let events = 0;
  let ok = true;
  let documents = 0;
  let detail = "";
  const stats = { reads: 0 };
  let bytesPerEvent = 0;
  let segments = 0;
  const work = async () => {
    if (arg === "list") {
      // The floor: what reading the log costs before anything is checked or folded.
      for await (const batch of readLog(kv, { stats })) events += batch.length;
    } else if (arg === "floor") {
      // What any rebuild-and-compare must read at least once: the log and the live projections.
      for await (const batch of readLog(kv, { stats })) events += batch.length;
      for await (const _ of kv.list({ prefix: PROJECTIONS }, { batchSize: 1000 })) documents++;
    } else if (arg === "all") {
      // The audit's floor: every KV entry read once through kv.list (log, projections, the rest).
      for await (const _ of kv.list({ prefix: [] }, { batchSize: 1000 })) documents++;
      events = (await kv.get<{ position: number }>(HEAD)).value?.position ?? 0;
    } else if (arg === "bytes") {
      // What the log takes in KV values (segments and tail lines), per event.
      let total = 0;
      for (const prefix of [LOG_SEGMENTS, LOG_TAIL]) {
        for await (const e of kv.list<Uint8Array>({ prefix }, { batchSize: 256 })) {
          total += e.value.byteLength;
          if (prefix === LOG_SEGMENTS) segments++;
        }
      }
      events = (await kv.get<{ position: number }>(HEAD)).value?.position ?? 0;
      bytesPerEvent = events ? total / events : 0;
    } else if (arg === "verify") {
      const v = await verifyChain(kv);
      events = v.events;
      ok = v.ok;
    } else if (arg === "memory") {
      const r = await replayAndCompare(kv, allProjections);
      events = r.chain.events;
      ok = r.equal;
      documents = r.documents;
      detail = r.mismatches.slice(0, 2).map((m) => m.key).join(" ");
    } else {
      throw new Error(`unknown replay mode ${arg}`);
    }
  };
  if (Deno.env.get("BENCH_PROFILE") === "1") {
    console.error(renderHotSpots(`replay ${arg}`, await profile(work)));
  } else {
    await work();
  }
  const ms = performance.now() - t0;
  const sampledRssMiB = sampler.stop();
  console.log(JSON.stringify({
    mode: arg,
    events,
    ms,
    perSecond: events / (ms / 1000),
    ok,
    documents,
    logReadsPer1000: events ? (stats.reads * 1000) / events : 0,
    bytesPerEvent,
    segments,
    detail,
    peakRssMiB: peakRssMiB() ?? sampledRssMiB,
    sampledRssMiB,
    startRssMiB: baseRss,
  }));
  kv.close();
} else {
  console.error("usage: events-child.ts write <path> <n> | replay <path> <mode>");
  Deno.exit(2);
}
