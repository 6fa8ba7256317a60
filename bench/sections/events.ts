/**
 * Event store: appends through the real store, then replay and audit of a large log.
 *
 * The large log is bulk-written (bench/lib/synthetic-log.ts: same keys, same hash chain, live
 * projections folded by the real projection code) and cached under bench/results/cache, since
 * writing it through `EventStore.append` would take far longer than the benchmark. Each replay
 * runs in a child process so its peak RSS is its own.
 */
import { EventStore } from "../../events/store.ts";
import { allProjections } from "../../projections/index.ts";
import { lastJson, runDeno } from "../lib/child.ts";
import type { Row, SectionResult } from "../lib/report.ts";
import { SYNTHETIC_LOG_VERSION, syntheticCommits } from "../lib/synthetic-log.ts";
import { closedLoop } from "../lib/stats.ts";

const here = new URL(".", import.meta.url);
const CHILD = new URL("../lib/events-child.ts", here).pathname;
const AUDIT = new URL("../../src/cli/audit.ts", here).pathname;
const CACHE = new URL("../results/cache/", here).pathname;

export interface EventsOptions {
  quick: boolean;
  /** Events in the large log. */
  logEvents: number;
  /** Events in the log for the document-by-document replay (too slow for 1M). */
  exactEvents: number;
  durationMs: number;
  /** CPU-profile each replay child and print its hot spots. */
  profile: boolean;
  log: (msg: string) => void;
}

interface ReplayOut {
  mode: string;
  events: number;
  ms: number;
  perSecond: number;
  ok: boolean;
  documents: number;
  /** For "bytes": stored bytes of the log per event, and its segments. */
  bytesPerEvent?: number;
  segments?: number;
  detail: string;
  peakRssMiB: number;
}

export async function eventStore(opts: EventsOptions): Promise<SectionResult> {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};

  // Appends through the normal path, on a KV file (an in-memory KV would flatter it).
  const dir = await Deno.makeTempDir({ prefix: "tcb-bench-append-" });
  try {
    for (const concurrency of [1, 8]) {
      const kv = await Deno.openKv(`${dir}/append-${concurrency}.sqlite3`);
      const store = new EventStore(kv, { projections: allProjections });
      const source = syntheticCommits(10_000_000, 7 + concurrency);
      let events = 0;
      const r = await closedLoop(async () => {
        const next = source.next();
        if (next.done) return;
        const appends = next.value.commit.map((c) => ({
          stream: c.stream,
          expectedVersion: "any" as const,
          events: c.events,
        }));
        await store.append(appends);
        events += appends.reduce((n, a) => n + a.events.length, 0);
      }, { concurrency, durationMs: opts.durationMs });
      kv.close();
      const perSecond = events / (r.wallMs / 1000);
      raw[`append_c${concurrency}`] = { events, commits: r.latencies.length, wallMs: r.wallMs };
      rows.push({
        area: "event store",
        figure: `appends/s through EventStore.append, ${concurrency} writer${
          concurrency > 1 ? "s" : ""
        }`,
        value: perSecond,
        unit: "events/s",
        note: `KV file; one commit per append with inline projections${
          r.errors ? `; ${r.errors} errors: ${r.firstError}` : ""
        }`,
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }

  const bigLog = await ensureLog(opts.logEvents, opts.log);
  raw.logs = { big: bigLog };

  const replay = async (path: string, mode: string) => {
    opts.log(`replay ${mode} over ${path.split("/").pop()}`);
    const run = await runDeno(["run", "-A", "--unstable-kv", CHILD, "replay", path, mode], {
      env: opts.profile ? { BENCH_PROFILE: "1" } : {},
      echoStderr: opts.profile,
    });
    if (run.code !== 0) throw new Error(`replay ${mode} failed: ${run.stderr.slice(-800)}`);
    const out = lastJson<ReplayOut>(run.stdout);
    raw[`replay_${mode}`] = { ...out, processPeakRssMiB: run.peakRssMiB };
    return out;
  };
  const RSS_GOAL = 256;
  const RATE_GOAL = 50_000;
  const replayRow = (out: ReplayOut, figure: string, note: string): Row[] => [
    {
      area: "event store",
      figure: `${figure}, ${out.events.toLocaleString("en-US")} events`,
      value: out.perSecond,
      unit: "events/s",
      goal: ">= 50,000/s",
      met: out.ok ? out.perSecond >= RATE_GOAL : false,
      note: `${(out.ms / 1000).toFixed(1)} s; ${
        out.ok ? "chain ok, projections equal" : `NOT OK ${out.detail}`
      }; ${note}`,
    },
    {
      area: "event store",
      figure: `  peak RSS of that replay`,
      value: out.peakRssMiB,
      unit: "MiB",
      goal: "<= 256 MiB",
      met: out.peakRssMiB <= RSS_GOAL,
      note: "VmHWM of the replay's own process",
    },
  ];

  const list = await replay(bigLog, "list");
  rows.push({
    area: "event store",
    figure: `read the log only (kv.list), ${list.events.toLocaleString("en-US")} events`,
    value: list.perSecond,
    unit: "events/s",
    note: "the floor under any replay: KV read + decode, nothing checked",
  });
  const floor = await replay(bigLog, "floor");
  rows.push({
    area: "event store",
    figure: `read the log and the live projections (kv.list), ${
      floor.events.toLocaleString("en-US")
    } events`,
    value: floor.perSecond,
    unit: "events/s",
    note: `${(floor.ms / 1000).toFixed(1)} s for ${
      floor.documents.toLocaleString("en-US")
    } documents beside the events: the floor under a rebuild + compare on one thread`,
  });
  rows.push(
    ...replayRow(await replay(bigLog, "verify"), "verify hash chain (verifyChain)", "no folding"),
  );
  rows.push(
    ...replayRow(
      await replay(bigLog, "memory"),
      "replay: rebuild + compare in memory (replayAndCompare)",
      "projections held in a Map",
    ),
  );
  // What the log layout costs on disk and per read.
  const bytes = await replay(bigLog, "bytes");
  rows.push({
    area: "event store",
    figure: "stored bytes per event (sealed segments)",
    value: bytes.bytesPerEvent ?? 0,
    unit: "bytes",
    note: `hash + canonical body per event, ${
      (bytes.segments ?? 0).toLocaleString("en-US")
    } segments; the first layout stored a V8-serialised object with prevHash per KV entry`,
  });

  // The audit CLI as an operator runs it: full, then incremental on top of 10,000 more events,
  // each as a ratio to what it is bounded by, measured beside it.
  const auditRows = await audits(bigLog, opts, () => replay(bigLog, "all"));
  rows.push(...auditRows.rows);
  raw.audit = auditRows.raw;
  return { rows, raw };
}

/** `deno task audit` as deno.json runs it (plain permissions, no flags). */
const audit = async (kvPath: string, out: string, from?: string) => {
  const run = await runDeno([
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-net",
    "--unstable-kv",
    AUDIT,
    "--kv",
    kvPath,
    "--out",
    out,
    ...(from ? ["--from", from] : []),
  ]);
  let summary: Record<string, unknown> = {};
  try {
    summary = JSON.parse(await Deno.readTextFile(`${out}/summary.json`));
  } catch { /* reported below */ }
  return { run, summary };
};

const auditNote = (s: Record<string, unknown>, code: number) =>
  `chain ${(s.chain as { ok?: boolean })?.ok ? "ok" : "NOT ok"}, ${
    (s.projections as { mismatches?: number })?.mismatches ?? "?"
  } mismatches, exceptions ${
    JSON.stringify((s.exceptions as { byKind?: unknown })?.byKind ?? {})
  } (the synthetic log has fee-less creations on purpose); exit ${code}`;

const TABLES = ["builds", "totals_by_key", "totals_by_day", "purchases", "exceptions"];

async function differingTables(a: string, b: string): Promise<string[]> {
  const out: string[] = [];
  for (const t of TABLES) {
    const x = await Deno.readFile(`${a}/${t}.csv`).catch(() => new Uint8Array());
    const y = await Deno.readFile(`${b}/${t}.csv`).catch(() => new Uint8Array([1]));
    if (x.length !== y.length || x.some((v, i) => v !== y[i])) out.push(t);
  }
  return out;
}

/**
 * The floor (every KV entry read once through kv.list, in a child of its own), the full audit,
 * the floor again, then 10,000 events appended, the incremental audit and a full one of the grown
 * log: each ratio is taken between runs next to each other, as the machine's load moves.
 */
export async function audits(
  bigLog: string,
  opts: EventsOptions,
  floorRun: () => Promise<ReplayOut>,
) {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const dir = await Deno.makeTempDir({ prefix: "tcb-bench-audit-" });
  try {
    opts.log("floor, audit (full), floor");
    const before = await floorRun();
    const full = await audit(bigLog, `${dir}/full`);
    const after = await floorRun();
    const floorMs = (before.ms + after.ms) / 2;
    const events = Number(full.summary.events ?? opts.logEvents);
    const ratio = full.run.ms / floorMs;
    raw.full = {
      ms: full.run.ms,
      floorMs: [before.ms, after.ms],
      peakRssMiB: full.run.peakRssMiB,
      summary: full.summary,
    };
    rows.push(
      {
        area: "audit",
        figure: `every KV entry read once (kv.list), ${events.toLocaleString("en-US")} events`,
        value: floorMs / 1000,
        unit: "s",
        note: `the floor the audit is measured against: ${
          before.documents.toLocaleString("en-US")
        } entries; ${(before.ms / 1000).toFixed(1)} s before the audit, ${
          (after.ms / 1000).toFixed(1)
        } s after`,
      },
      {
        area: "audit",
        figure: `deno task audit (full) / that floor, ${events.toLocaleString("en-US")} events`,
        value: ratio,
        unit: "x",
        goal: "<= 3x",
        met: ratio <= 3,
        note: `${(full.run.ms / 1000).toFixed(1)} s incl. start-up; ${
          auditNote(full.summary, full.run.code)
        }`,
      },
      {
        area: "audit",
        figure: "  peak RSS of that audit",
        value: full.run.peakRssMiB ?? 0,
        unit: "MiB",
        goal: "<= 512 MiB",
        met: (full.run.peakRssMiB ?? Infinity) <= 512,
        note: "VmHWM of the audit's process",
      },
    );

    // 10,000 more events through the real store, then the audit from the full one's checkpoint.
    const grown = `${dir}/grown.sqlite3`;
    await Deno.copyFile(bigLog, grown);
    opts.log("append 10,000 events through the store");
    const app = await runDeno([
      "run",
      "-A",
      "--unstable-kv",
      CHILD,
      "append",
      grown,
      "10000",
      String(events),
    ]);
    const appended = lastJson<{ appended: number; perSecond: number }>(app.stdout);
    rows.push({
      area: "event store",
      figure: `appends/s through EventStore.append on top of the ${
        events.toLocaleString("en-US")
      }-event log`,
      value: appended.perSecond,
      unit: "events/s",
      note: `${appended.appended} events, 1 writer, sealing as it goes`,
    });
    opts.log("audit --from the checkpoint, then a full audit of the grown log");
    const inc = await audit(grown, `${dir}/inc`, `${dir}/full`);
    const again = await audit(grown, `${dir}/again`);
    const differing = await differingTables(`${dir}/inc`, `${dir}/again`);
    const share = inc.run.ms / again.run.ms;
    raw.incremental = { ms: inc.run.ms, peakRssMiB: inc.run.peakRssMiB, summary: inc.summary };
    raw.fullGrown = { ms: again.run.ms, peakRssMiB: again.run.peakRssMiB };
    rows.push({
      area: "audit",
      figure: `deno task audit --from <checkpoint> / full audit: 10,000 events on top of ${
        events.toLocaleString("en-US")
      }`,
      value: share,
      unit: "x",
      goal: "<= 0.33x",
      met: share <= 1 / 3,
      note: `${(inc.run.ms / 1000).toFixed(1)} s against ${
        (again.run.ms / 1000).toFixed(1)
      } s; peak RSS ${inc.run.peakRssMiB?.toFixed(0) ?? "?"} MiB; ${
        (inc.summary.projections as { documents?: number })?.documents ?? "?"
      } documents compared; tables ${
        differing.length
          ? `DIFFER from a full audit's: ${differing.join(", ")}`
          : "equal to a full audit's"
      }; ${auditNote(inc.summary, inc.run.code)}`,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return { rows, raw };
}

/** The cached synthetic log of `events` events; written (in a child process) if missing. */
async function ensureLog(events: number, log: (m: string) => void): Promise<string> {
  await Deno.mkdir(CACHE, { recursive: true });
  const path = `${CACHE}log-v${SYNTHETIC_LOG_VERSION}-${events}.sqlite3`;
  try {
    await Deno.stat(path);
    return path;
  } catch { /* not cached yet */ }
  const tmp = `${CACHE}tmp-${crypto.randomUUID()}.sqlite3`;
  log(`writing a synthetic log of ${events} events (once; cached in bench/results/cache)`);
  const run = await runDeno(["run", "-A", "--unstable-kv", CHILD, "write", tmp, String(events)], {
    echoStderr: true,
  });
  if (run.code !== 0) throw new Error(`writing the log failed: ${run.stderr.slice(-800)}`);
  // Sidecars first, so the main file never appears without its WAL.
  for (const suffix of ["-wal", "-shm"]) {
    await Deno.rename(tmp + suffix, path + suffix).catch(() => {});
  }
  await Deno.rename(tmp, path);
  return path;
}
