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

/** The V8 flags `deno task audit` runs with (deno.json; tests/audit/task-flags.test.ts). */
export const AUDIT_V8_FLAGS =
  "--max-old-space-size=128,--max-semi-space-size=4,--no-allocation-site-pretenuring";

/** glibc's `MALLOC_MMAP_THRESHOLD_` as `deno task audit` sets it (docs/operations.md says why). */
export const AUDIT_MMAP_THRESHOLD = "4194304";

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
  /** For the streaming replay: "digest" or "documents" (projections/replay.ts). */
  compared?: string;
  /** For the streaming replay: wall time of each pass (projections/replay.ts). */
  passesMs?: Record<string, number>;
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
  const exactLog = opts.exactEvents === opts.logEvents
    ? bigLog
    : await ensureLog(opts.exactEvents, opts.log);
  raw.logs = { big: bigLog, exact: exactLog };

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
  const streamed = await replay(bigLog, "stream");
  rows.push(
    ...replayRow(
      streamed,
      "replay: rebuild + compare by digest (replayIntoAndCompare)",
      `compared: ${streamed.compared}; passes ${
        Object.entries(streamed.passesMs ?? {}).map(([p, ms]) => `${p} ${(ms / 1000).toFixed(1)} s`)
          .join(", ")
      }; documents held until their last event; the audit's path`,
    ),
  );
  rows.push(
    ...replayRow(
      await replay(exactLog, "exact"),
      "replay: rebuild into scratch KV + compare documents (exact: true)",
      "what a digest mismatch falls back to (and the audit's path before the digest)",
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

  // The audit CLI as an operator runs it: full, then incremental on top of 10,000 more events.
  const auditRows = await audits(bigLog, opts);
  rows.push(...auditRows.rows);
  raw.audit = auditRows.raw;
  return { rows, raw };
}

const audit = async (kvPath: string, out: string, from?: string) => {
  // As `deno task audit` runs it (deno.json): the allocator setting is in the environment.
  Deno.env.set("MALLOC_MMAP_THRESHOLD_", AUDIT_MMAP_THRESHOLD);
  const run = await runDeno([
    "run",
    "-A",
    "--unstable-kv",
    `--v8-flags=${AUDIT_V8_FLAGS}`,
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

async function audits(bigLog: string, opts: EventsOptions) {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const dir = await Deno.makeTempDir({ prefix: "tcb-bench-audit-" });
  try {
    opts.log("audit (full)");
    const full = await audit(bigLog, `${dir}/full`);
    const events = Number(full.summary.events ?? opts.logEvents);
    raw.full = { ms: full.run.ms, peakRssMiB: full.run.peakRssMiB, summary: full.summary };
    rows.push(
      {
        area: "audit",
        figure: `deno task audit (full), ${events.toLocaleString("en-US")} events`,
        value: full.run.ms / 1000,
        unit: "s",
        goal: "<= 20 s at 1M",
        met: events >= 1_000_000 ? full.run.ms <= 20_000 : undefined,
        note: `${(events / (full.run.ms / 1000)).toFixed(0)} events/s incl. start-up; ${
          auditNote(full.summary, full.run.code)
        }`,
      },
      {
        area: "audit",
        figure: "  peak RSS of that audit",
        value: full.run.peakRssMiB ?? 0,
        unit: "MiB",
        goal: "<= 256 MiB",
        met: (full.run.peakRssMiB ?? Infinity) <= 256,
        note: "VmHWM of the audit's process",
      },
      {
        area: "audit",
        figure: "  KV reads of the log per 1,000 events",
        value: Number(full.summary.logReadsPer1000Events ?? 0),
        unit: "reads",
        goal: "small",
        note: "both passes over the log (was 2,000: one entry per event, read twice)",
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
    opts.log("audit --from the checkpoint");
    const inc = await audit(grown, `${dir}/inc`, `${dir}/full`);
    opts.log("audit (full) of the grown log, for the comparison");
    const again = await audit(grown, `${dir}/again`);
    const differing: string[] = [];
    for (const t of ["builds", "totals_by_key", "totals_by_day", "purchases", "exceptions"]) {
      const a = await Deno.readFile(`${dir}/inc/${t}.csv`).catch(() => new Uint8Array());
      const b = await Deno.readFile(`${dir}/again/${t}.csv`).catch(() => new Uint8Array([1]));
      if (a.length !== b.length || a.some((x, i) => x !== b[i])) differing.push(t);
    }
    raw.incremental = { ms: inc.run.ms, peakRssMiB: inc.run.peakRssMiB, summary: inc.summary };
    raw.fullGrown = { ms: again.run.ms, peakRssMiB: again.run.peakRssMiB };
    rows.push(
      {
        area: "audit",
        figure: `deno task audit --from <checkpoint>: 10,000 events on top of ${
          events.toLocaleString("en-US")
        }`,
        value: inc.run.ms / 1000,
        unit: "s",
        goal: "<= 3 s at 1M",
        met: events >= 1_000_000 ? inc.run.ms <= 3_000 : undefined,
        note: `peak RSS ${inc.run.peakRssMiB?.toFixed(0) ?? "?"} MiB; ${
          (inc.summary.projections as { documents?: number })?.documents ?? "?"
        } documents compared; tables ${
          differing.length
            ? `DIFFER from a full audit's: ${differing.join(", ")}`
            : "equal to a full audit's"
        } (full audit of the same log: ${(again.run.ms / 1000).toFixed(1)} s); ${
          auditNote(inc.summary, inc.run.code)
        }`,
      },
    );
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
