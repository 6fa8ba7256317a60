/**
 * `deno task bench [--quick] [--only=api,lifecycle,watcher,events,vanity]`
 *   [--profile=build,verify,hosted,replay] [--log-events=N] [--exact-events=N]
 *
 * One command: starts the embedded chain in a process of its own and the service in this one,
 * measures, prints one table and writes the results as JSON to bench/results/ (gitignored).
 * Figures are ratios or counts measured side by side in the same run wherever possible, because
 * this machine is shared and absolute numbers drift from run to run. BENCHMARKS.md records a run.
 */
import { parseArgs } from "node:util";
import { api } from "./sections/api.ts";
import { bareHono } from "./sections/bare.ts";
import { eventStore } from "./sections/events.ts";
import { lifecycle } from "./sections/lifecycle.ts";
import { watcher } from "./sections/watcher.ts";
import { vanity } from "./sections/vanity.ts";
import { renderTable, type Row } from "./lib/report.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    "log-events": { type: "string" },
    "exact-events": { type: "string" },
    profile: { type: "string" },
  },
}).values;
const quick = args.quick!;
const only = new Set((args.only ?? "bare,api,lifecycle,watcher,events,vanity").split(","));
const started = performance.now();
const log = (m: string) =>
  console.error(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}`);

const settings = {
  quick,
  durationMs: quick ? 800 : 3_000,
  samples: quick ? 8 : 40,
  latencyMs: 50,
  logEvents: Number(args["log-events"] ?? (quick ? 20_000 : 1_000_000)),
  exactEvents: Number(args["exact-events"] ?? (quick ? 20_000 : 100_000)),
  hostedImageBytes: 48 * 1024,
};

const machine = machineDescription();
log(`${quick ? "quick smoke run" : "full run"} on ${machine.summary}`);

const rows: Row[] = [];
const raw: Record<string, unknown> = { settings, machine };
const failures: string[] = [];

log("bare Hono ceiling");
const bare = await bareHono({
  durationMs: settings.durationMs,
  bytesSize: settings.hostedImageBytes,
});
rows.push(...bare.rows);
raw.bare = bare.raw;

const section = async (name: string, run: () => Promise<{ rows: Row[]; raw: unknown }>) => {
  if (!only.has(name)) return;
  log(`section ${name}`);
  try {
    const r = await run();
    rows.push(...r.rows);
    raw[name] = r.raw;
  } catch (e) {
    const msg = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
    failures.push(`${name}: ${msg}`);
    rows.push({
      area: name,
      figure: "section failed",
      value: null,
      note: msg.split("\n")[0].slice(0, 160),
    });
  }
};

await section("api", () =>
  api({
    quick,
    durationMs: settings.durationMs,
    samples: settings.samples,
    latencyMs: settings.latencyMs,
    bare: bare.ceiling,
    log,
    profile: new Set((args.profile ?? "").split(",").filter(Boolean)),
  }));
await section("lifecycle", () => lifecycle({ quick, log }));
await section("watcher", () => watcher({ quick, log }));
await section("events", () =>
  eventStore({
    quick,
    logEvents: settings.logEvents,
    exactEvents: settings.exactEvents,
    durationMs: settings.durationMs,
    profile: (args.profile ?? "").split(",").includes("replay"),
    log,
  }));

await section("vanity", () => vanity({ quick, log }));

const wallS = (performance.now() - started) / 1000;
const goals = rows.filter((r) => r.met !== undefined);
const met = goals.filter((r) => r.met === true).length;

console.log();
console.log(
  `Benchmark ${quick ? "(quick) " : ""}- ${machine.summary} - ${new Date().toISOString()}`,
);
console.log(renderTable(rows));
console.log(`\ngoals met: ${met} of ${goals.length}; wall time ${wallS.toFixed(0)} s`);
if (failures.length) console.log(`\nfailed sections:\n${failures.join("\n")}`);

const dir = new URL("./results/", import.meta.url).pathname;
await Deno.mkdir(dir, { recursive: true });
const stamp = new Date().toISOString().replaceAll(":", "").slice(0, 17);
const file = `${dir}bench-${stamp}Z${quick ? "-quick" : ""}.json`;
const json = JSON.stringify({ at: new Date().toISOString(), wallS, rows, raw, failures }, null, 2);
await Deno.writeTextFile(file, json);
await Deno.writeTextFile(`${dir}latest.json`, json);
console.log(`results: ${file}`);
// Worker threads and the KV queue could keep the process alive; the run is over.
Deno.exit(failures.length ? 1 : 0);

function machineDescription() {
  let model = "unknown CPU";
  let memGiB = 0;
  try {
    model = /model name\s*:\s*(.+)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1] ?? model;
    const kb = Number(/MemTotal:\s+(\d+)/.exec(Deno.readTextFileSync("/proc/meminfo"))?.[1]);
    memGiB = kb / 1024 / 1024;
  } catch { /* not Linux */ }
  const cores = navigator.hardwareConcurrency;
  return {
    cores,
    model,
    memGiB: Math.round(memGiB * 10) / 10,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    summary: `${cores} cores (${model}), ${memGiB.toFixed(1)} GiB, Deno ${Deno.version.deno}`,
  };
}
