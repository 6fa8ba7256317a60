/**
 * `deno task reliability [--cycles=N] [--clients=N] [--cycle-ms=N]`
 *
 * Kill -9 cycles under mixed load (bench/lib/kill-cycles.ts): prints lost acknowledged writes,
 * double counts, 5xx, the retry wait after a restart (median, max) and the restart time, each
 * with its goal, and exits 1 when a goal is missed. BENCHMARKS.md records a run.
 */
import { parseArgs } from "node:util";
import { runKillCycles } from "./lib/kill-cycles.ts";
import { renderTable, type Row } from "./lib/report.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    cycles: { type: "string", default: "12" },
    clients: { type: "string", default: "16" },
    "cycle-ms": { type: "string", default: "5000" },
  },
}).values;
const started = performance.now();
const log = (m: string) =>
  console.error(
    `[reliability ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`,
  );

const r = await runKillCycles({
  cycles: Number(args.cycles),
  clients: Number(args.clients),
  cycleMs: Number(args["cycle-ms"]),
  log,
});

const s = (ms: number | null) => ms === null ? null : Math.round(ms / 10) / 100;
const rows: Row[] = [
  {
    area: "kill -9",
    figure: "lost acknowledged writes",
    value: String(r.lostAcknowledged),
    goal: "0",
    met: r.lostAcknowledged === 0,
    note:
      `${r.acknowledged.metadata} metadata, ${r.acknowledged.builds} builds, ${r.acknowledged.relays} relays acknowledged`,
  },
  {
    area: "kill -9",
    figure: "double counts",
    value: String(r.doubleCounts),
    goal: "0",
    met: r.doubleCounts === 0,
  },
  {
    area: "kill -9",
    figure: "5xx answers",
    value: String(r.serverErrors),
    goal: "0",
    met: r.serverErrors === 0,
    note: `of ${r.requests} requests; ${r.clientErrors} other 4xx`,
  },
  {
    area: "kill -9",
    figure: "retry wait after restart, median",
    value: s(r.retryWaitMs.median),
    unit: "s",
    goal: "<= 5 s",
    met: r.retryWaitMs.median === null ? null : r.retryWaitMs.median <= 5_000,
    note: `${r.retryWaitMs.samples} requests cut off by a kill, retried with the same key`,
  },
  {
    area: "kill -9",
    figure: "retry wait after restart, max",
    value: s(r.retryWaitMs.max),
    unit: "s",
    goal: "<= 5 s",
    met: r.retryWaitMs.max === null ? null : r.retryWaitMs.max <= 5_000,
  },
  {
    area: "kill -9",
    figure: "restart (kill to ready), median / max",
    value: `${s(r.restartMs.median)} / ${s(r.restartMs.max)}`,
    unit: "s",
    note: `${r.cycles} cycles, ${r.clients} clients`,
  },
  {
    area: "kill -9",
    figure: "audit --verify-chain",
    value: r.audit.code === 0 ? "ok" : `exit ${r.audit.code}`,
    goal: "ok",
    met: r.audit.code === 0,
    note: r.audit.summary ? `${r.audit.summary.events} events` : undefined,
  },
];
console.log(renderTable(rows));
if (r.problems.length) console.error(`problems:\n  ${r.problems.join("\n  ")}`);
console.log(JSON.stringify(r));
Deno.exit(rows.some((row) => row.met === false) ? 1 : 0);
