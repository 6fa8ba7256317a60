/** `deno task audit --from` and `--ndjson` as an operator runs them, on KV files. */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { allProjections } from "../../projections/index.ts";
import { EventStore } from "../../events/store.ts";
import { built, cleanWorkload, confirmed, DAY2, workload } from "./fixtures.ts";
import { runTask, withKvAt } from "../support/kv.ts";

/** `deno task audit --from <from>` into `out`, with more flags after. */
const auditFrom = (kvPath: string, out: string, from: string, ...more: string[]) =>
  runTask("audit", "--kv", kvPath, "--out", out, "--from", from, ...more);

const TABLES = ["builds", "totals_by_key", "totals_by_day", "purchases", "exceptions"];

const sameTables = async (a: string, b: string) => {
  for (const t of TABLES) {
    assertEquals(
      await Deno.readTextFile(`${a}/${t}.csv`),
      await Deno.readTextFile(`${b}/${t}.csv`),
      t,
    );
  }
};

Deno.test("audit --from a checkpoint, and audit --ndjson of an export, write a full audit's tables", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-audit-inc-cli-" });
  try {
    const kvPath = `${dir}/service.sqlite3`;
    await withKvAt(kvPath, workload);
    const first = await runTask("audit", "--kv", kvPath, "--out", `${dir}/first`);
    assertEquals(first.code, 1, first.stderr); // the workload has findings on purpose
    assertMatch(JSON.parse(first.stdout).checkpoint, /first\/checkpoint\.json$/);

    await withKvAt(kvPath, async (kv) => {
      const store = new EventStore(kv, { projections: allProjections, now: () => DAY2 });
      for (let i = 20; i < 25; i++) {
        await store.append([{
          stream: `build-${i}`,
          expectedVersion: 0,
          events: [built(i, "k1", "p1", "2026-11-23"), confirmed(i)],
        }]);
      }
    });
    const inc = await auditFrom(kvPath, `${dir}/inc`, `${dir}/first`);
    const full = await runTask("audit", "--kv", kvPath, "--out", `${dir}/full`);
    assertEquals(inc.code, full.code, inc.stderr);
    assertEquals(JSON.parse(inc.stdout).from, JSON.parse(first.stdout).events);
    await sameTables(`${dir}/inc`, `${dir}/full`);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/inc/summary.json`));
    assertEquals(summary.projections.compared, "incremental");
    // The state moved on to `inc`: `first` cannot be started from again.
    const stale = await auditFrom(kvPath, `${dir}/x`, `${dir}/first`);
    assertEquals(stale.code, 2);
    assertMatch(stale.stderr, /its state has moved on/);
    // --keep-from copies it: `inc` stays a starting point.
    const kept = await auditFrom(kvPath, `${dir}/kept`, `${dir}/inc`, "--keep-from");
    assertEquals(kept.code, full.code, kept.stderr);
    await sameTables(`${dir}/kept`, `${dir}/full`);
    await Deno.stat(`${dir}/inc/state.sqlite3`);

    const exp = await runTask("events:export", "--kv", kvPath, "--out", `${dir}/log.ndjson`);
    assertEquals(exp.code, 0, exp.stderr);
    const head = JSON.parse(exp.stderr).head.hash;
    const nd = await runTask(
      "audit",
      "--ndjson",
      `${dir}/log.ndjson`,
      "--expect-head",
      head,
      "--out",
      `${dir}/nd`,
    );
    assertEquals(nd.code, full.code, nd.stderr);
    await sameTables(`${dir}/nd`, `${dir}/full`);

    const bad = await runTask(
      "audit",
      "--ndjson",
      `${dir}/log.ndjson`,
      "--expect-head",
      "0".repeat(64),
    );
    assertEquals(bad.code, 1);
    assertMatch(bad.stderr, /--ndjson refused: line \d+: the last event's hash/);
    const wrongFrom = await runTask("audit", "--kv", kvPath, "--from", `${dir}/nowhere`);
    assertEquals(wrongFrom.code, 2);
    assert(wrongFrom.stderr.includes("no usable checkpoint"));

    // A checkpoint whose state is gone is refused, asking for a full audit.
    await Deno.remove(`${dir}/kept/state.sqlite3`);
    const noState = await auditFrom(kvPath, `${dir}/no-state`, `${dir}/kept`);
    assertEquals(noState.code, 2, noState.stderr);
    assertMatch(noState.stderr, /run a full audit/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit --from while another process appends to the KV file: no false mismatch, the writes settled", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-audit-inc-live-" });
  const kvPath = `${dir}/service.sqlite3`;
  const kv = await Deno.openKv(kvPath);
  try {
    const store = await cleanWorkload(kv);
    const first = await runTask("audit", "--kv", kvPath, "--out", `${dir}/first`);
    assertEquals(first.code, 0, first.stderr);
    let next = 100;
    // Builds for the key and day the new events use: they move shared documents (usage, lists).
    const build = () =>
      store.append([{
        stream: `build-${next}`,
        expectedVersion: 0,
        events: [built(next, "k1", "p1", "2026-11-23"), confirmed(next++)],
      }]);
    for (let i = 0; i < 20; i++) await build();

    // This process is the service: it keeps appending while the audit (another process) runs.
    let auditing = true;
    const audit = auditFrom(kvPath, `${dir}/inc`, `${dir}/first`)
      .finally(() => (auditing = false));
    let during = 0;
    while (auditing) {
      await build();
      during++;
      await new Promise((r) => setTimeout(r, 1));
    }
    const inc = await audit;
    assert(during > 0, "nothing was written while the audit ran");
    assertEquals(inc.code, 0, inc.stderr);
    const summary = JSON.parse(await Deno.readTextFile(`${dir}/inc/summary.json`));
    assertEquals(summary.projections.compared, "incremental");
    assertEquals(summary.projections.mismatches, 0);
    assert(summary.chain.ok);
    // The audit covered the log up to the head it read first; the next one audits the rest.
    const next2 = await auditFrom(kvPath, `${dir}/inc2`, `${dir}/inc`);
    assertEquals(next2.code, 0, next2.stderr);
    assertEquals(JSON.parse(next2.stdout).events, 3 + 6 + 4 + 2 * (20 + during));
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
