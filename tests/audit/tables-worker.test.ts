/**
 * The full audit writes the later builds of a large builds table on another thread
 * (src/audit/tables-worker.ts): given a log with builds that raise exceptions on both sides of
 * the split, an outcome for a build never built, a build by a key never issued and builds of two
 * days, when it is audited with the table split and on one thread, then every table (CSV and
 * JSON), the index the next incremental audit splices by and the summary are the same, and no
 * part file is left.
 */
import { assert, assertEquals } from "../support/assert.ts";
import type { DomainEvent } from "../../events/types.ts";
import type { EventStore } from "../../events/store.ts";
import { AUDIT_TABLES, type AuditSummary, runAudit } from "../../src/audit/audit.ts";
import { FileSink, type Row, TablePart } from "../../src/audit/sink.ts";
import type { AuditProgress } from "../../src/audit/progress.ts";
import { TABLES_INDEX } from "../../src/audit/table-splice.ts";
import { AUDIT_BUILD, BUILDS_PER_PACK } from "../../src/audit/folds.ts";
import { projectionKey, PROJECTIONS } from "../../events/keys.ts";
import { built, confirmed, purchaseWithKey, unverified, withFileLog } from "./fixtures.ts";
import { readEvents } from "../../events/log.ts";
import { rewriteBodyText } from "../events/support/tamper.ts";

async function audit(
  kv: Deno.Kv,
  root: string,
  name: string,
  tablesWorkerMin: number,
  from?: { summary: AuditSummary; state: string },
  more: { kvPath?: string; liveHeld?: () => Promise<unknown> } = {},
) {
  const dir = `${root}/${name}`;
  const state = `${root}/${name}.sqlite3`;
  if (from) await Deno.copyFile(from.state, state);
  const scratch = await Deno.openKv(state);
  const progress: AuditProgress[] = [];
  try {
    const summary: AuditSummary = await runAudit({
      kv,
      scratch,
      sink: await FileSink.create(dir, AUDIT_TABLES),
      tablesIndex: true,
      statePath: state,
      tablesWorkerMin,
      // An incremental audit without the earlier tables writes its tables in full.
      from: from?.summary.checkpoint ?? null,
      onProgress: (p) => progress.push(p),
      now: () => 0,
      ...more,
    });
    const tables = progress.find((p) => p.step === "tables");
    return {
      summary,
      dir,
      state,
      laterBuilds: tables?.step === "tables" ? tables.laterBuilds ?? 0 : 0,
      earlyBuilds: tables?.step === "tables" ? tables.earlyBuilds ?? 0 : 0,
    };
  } finally {
    scratch.close();
  }
}

const read = (path: string) => Deno.readTextFile(path);

/** The state packs builds by id (folds.ts): three of these builds to a pack, so they span many. */
const buildId = (i: number) => i * Math.ceil(BUILDS_PER_PACK / 3);

/** Every table, CSV and JSON, the same text in both directories. */
async function sameTables(dir: string, expected: string) {
  for (const t of Object.keys(AUDIT_TABLES)) {
    for (const ext of ["csv", "json"]) {
      assertEquals(
        await read(`${dir}/${t}.${ext}`),
        await read(`${expected}/${t}.${ext}`),
        `${t}.${ext}`,
      );
    }
  }
}

Deno.test("given builds on both sides of the split, when the later ones are written on another thread, then the tables are one thread's byte for byte", async () => {
  await withFileLog("tcb-tables-worker-", async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    await purchaseWithKey(store, "p2", "k2", "WalletB");
    const append = (id: number, events: DomainEvent[]) =>
      store.append([{ stream: `build-${id}`, expectedVersion: "any", events }]);
    for (let i = 1; i <= 40; i++) {
      const id = buildId(i);
      const key = i === 33 ? "k9" : i % 2 ? "k1" : "k2"; // k9 is never issued
      const events = [
        built(id, key, key === "k2" ? "p2" : "p1", i < 25 ? "2026-11-22" : "2026-11-23"),
      ];
      if (i % 7 === 0) events.push(unverified(id, key, "0"));
      else if (i % 3 === 0) events.push(confirmed(id, i % 2 ? "19933334" : "100"));
      if (i === 12 || i === 31) events.push(confirmed(id)); // an outcome after the build was final
      await append(id, events);
    }
    await append(buildId(50), [confirmed(buildId(50))]); // never built
  }, async (kv, _store, root) => {
    const one = await audit(kv, root, "one", Infinity);
    const two = await audit(kv, root, "two", 0);
    assertEquals(one.laterBuilds, 0);
    // The builds' packs split in the middle: about half of the 41 rows on the other thread.
    assert(two.laterBuilds >= 12 && two.laterBuilds <= 29, `${two.laterBuilds}`);
    assert(two.summary.exceptions.total > 0);
    assertEquals({ ...two.summary, auditedAt: "" }, { ...one.summary, auditedAt: "" });
    await sameTables(two.dir, one.dir);
    assertEquals(
      await read(`${two.dir}/${TABLES_INDEX}`),
      await read(`${one.dir}/${TABLES_INDEX}`),
    );
    const index = (dir: string) => Deno.readFile(`${dir}/builds.index`);
    assertEquals(await index(two.dir), await index(one.dir));
    for await (const f of Deno.readDir(two.dir)) assert(!f.name.includes(".part."), f.name);
    // Exceptions of builds on both sides, in build order.
    const exceptions = (await read(`${two.dir}/exceptions.csv`)).split("\r\n");
    const ids = exceptions.slice(1).map((l) => Number(l.split(",")[2])).filter((n) => n > 0);
    const rows = [...Array.from({ length: 40 }, (_, i) => buildId(i + 1)), buildId(50)];
    const later = rows[rows.length - two.laterBuilds];
    assert(ids.some((id) => id < later) && ids.some((id) => id >= later), ids.join(" "));
  });
});

Deno.test("FileSink.append puts a part's rows after the table's own, with or without rows before them, and their offsets move with them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-table-part-" });
  try {
    const columns = { t: ["n", "name"] };
    const row = (n: number): Row => ({ n, name: n % 2 ? `é,"${n}"` : `=${n}` });
    for (const before of [0, 2]) {
      for (const partRows of [0, 3]) {
        const out = `${dir}/${before}-${partRows}`;
        const sink = await FileSink.create(out, columns);
        for (let i = 0; i < before; i++) await sink.write("t", row(i));
        const part = await TablePart.create(out, "t", columns.t);
        const starts: { csv: number; json: number }[] = [];
        for (let i = before; i < before + partRows; i++) {
          starts.push(part.next());
          await part.write(row(i));
        }
        const shift = await sink.append("t", await part.close());
        await sink.close({});
        const csv = await Deno.readTextFile(`${out}/t.csv`);
        const json = await Deno.readTextFile(`${out}/t.json`);
        const rows = Array.from({ length: before + partRows }, (_, i) => row(i));
        assertEquals(JSON.parse(json), rows, `${before} rows, then ${partRows}`);
        const lines = csv.split("\r\n");
        assertEquals(lines.length, 2 + before + partRows, csv);
        const bytes = new TextEncoder();
        starts.forEach((at, i) => {
          const csvAt = bytes.encode(csv).subarray(at.csv + shift.csv);
          const jsonAt = bytes.encode(json).subarray(at.json + shift.json);
          assert(new TextDecoder().decode(csvAt).startsWith(`${before + i},`), `csv row ${i}`);
          assert(
            new TextDecoder().decode(jsonAt).startsWith(`{"n":${before + i},`),
            `json row ${i}`,
          );
        });
        for await (const f of Deno.readDir(out)) assert(!f.name.includes(".part."), f.name);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("given a build the worker cannot read, when the audit fails, then the worker's error is the audit's and no part file is left", async () => {
  await withFileLog("tcb-tables-worker-", async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 20; i++) {
      await store.append([{
        stream: `build-${i}`,
        expectedVersion: "any",
        events: [built(i, "k1", "p1", "2026-11-22"), confirmed(i)],
      }]);
    }
  }, async (kv, _store, root) => {
    const dir = `${root}/out`;
    const state = `${root}/out.sqlite3`;
    const scratch = await Deno.openKv(state);
    let error = "";
    try {
      await runAudit({
        kv,
        scratch,
        sink: await FileSink.create(dir, AUDIT_TABLES),
        tablesIndex: true,
        statePath: state,
        tablesWorkerMin: 0,
        // Once the state's builds are written (all in pack 0): pack 18, in the worker's half,
        // stored as raw bytes.
        onPass: async (pass) => {
          if (pass === "live") {
            await scratch.set([...PROJECTIONS, AUDIT_BUILD, 18], new Uint8Array([1, 2, 3]));
          }
        },
        now: () => 0,
      });
    } catch (e) {
      error = String(e);
    } finally {
      scratch.close();
    }
    assert(error.includes("builds table worker") && error.includes("not a V8 value"), error);
    for await (const f of Deno.readDir(dir)) assert(!f.name.includes(".part."), f.name);
  });
});

Deno.test("given a state an incremental audit writes to, when it writes its tables in full with the later builds on another thread, then they are a full audit's", async () => {
  const append = (store: EventStore, id: number, events: DomainEvent[]) =>
    store.append([{ stream: `build-${id}`, expectedVersion: "any", events }]);
  await withFileLog("tcb-tables-worker-", async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 20; i++) {
      await append(store, buildId(i), [built(buildId(i), "k1", "p1", "2026-11-22")]);
    }
  }, async (kv, store, root) => {
    const first = await audit(kv, root, "first", Infinity);
    assert(first.summary.checkpoint, "a clean first audit leaves a checkpoint");
    // Outcomes for builds on both sides of the split, and new builds.
    for (let i = 2; i <= 20; i += 3) await append(store, buildId(i), [confirmed(buildId(i))]);
    for (let i = 21; i <= 30; i++) {
      const id = buildId(i);
      await append(store, id, [built(id, "k1", "p1", "2026-11-23"), unverified(id, "k1", "0")]);
    }
    const next = await audit(kv, root, "next", 0, first);
    const full = await audit(kv, root, "full", Infinity);
    assertEquals(next.summary.projections.compared, "incremental");
    assert(next.laterBuilds > 0, "the other thread wrote the later builds");
    await sameTables(next.dir, full.dir);
  });
});

Deno.test("given the live pass ends after the chain pass, when this thread writes builds rows meanwhile, then the tables are one thread's byte for byte, a mismatch's exception still before the builds'", async () => {
  await withFileLog("tcb-early-builds-", async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 30; i++) {
      const id = buildId(i);
      const events = [built(id, "k1", "p1", "2026-11-22")];
      events.push(i % 4 === 0 ? unverified(id, "k1", "0") : confirmed(id));
      await store.append([{ stream: `build-${id}`, expectedVersion: "any", events }]);
    }
  }, async (kv, _store, root) => {
    // A live document edited behind the log's back: one projection mismatch.
    await kv.set(projectionKey("usage", ["p1", "2026-11-22"]), { tokens: 1, metadata: 0 });
    const one = await audit(kv, root, "one", Infinity);
    // Once its live pass is done, the other thread is held for a second: this thread's chain pass
    // over some 60 events is long done by then, and it writes builds rows meanwhile. The second counts
    // from the end of the live pass, not from the audit's start, whatever the machine's speed.
    const early = await audit(kv, root, "early", 0, undefined, {
      kvPath: `${root}/service.sqlite3`,
      liveHeld: () => new Promise((done) => setTimeout(done, 1_000)),
    });
    assert(early.earlyBuilds > 0, "rows written while the live pass was held");
    assertEquals(one.earlyBuilds, 0);
    assertEquals(early.summary.projections.mismatches, 1);
    assertEquals({ ...early.summary, auditedAt: "" }, { ...one.summary, auditedAt: "" });
    await sameTables(early.dir, one.dir);
    // The summary lists exception kinds in the order they first came: the same text too.
    const summaryText = (dir: string) =>
      read(`${dir}/summary.json`).then((t) => t.replace(/"auditedAt": "[^"]*"/, ""));
    assertEquals(await summaryText(early.dir), await summaryText(one.dir));
    const kinds = (await read(`${early.dir}/exceptions.csv`)).split("\r\n").slice(1, -1)
      .map((l) => l.split(",")[0]);
    assertEquals(kinds[0], "projection_mismatch");
    assert(kinds.slice(1).every((k) => k === "creation_unverified"), kinds.join(" "));
    for await (const f of Deno.readDir(early.dir)) assert(!f.name.includes(".part."), f.name);
  });
});

Deno.test("given a forged build id -0 beside builds -64, 0 and 64, when the table is split at pack 0, then the -0 build is on this thread's side and no row is lost", async () => {
  await withFileLog("tcb-minus-zero-", async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (const id of [-64, 0, 64]) {
      await store.append([{
        stream: `build-${id}`,
        expectedVersion: "any",
        events: [built(id, "k1", "p1", "2026-11-22"), confirmed(id)],
      }]);
    }
  }, async (kv, _store, root) => {
    // No store writes -0 (canonical JSON spells it 0): the log is forged to hold one.
    let at = 0;
    for await (const e of readEvents(kv)) {
      if (e.type === "TokenBuilt" && (e.data as { buildId: number }).buildId === 0) at = e.position;
    }
    await rewriteBodyText(kv, at, (body) => body.replace('"buildId":0,', '"buildId":-0,'));
    const one = await audit(kv, root, "one", Infinity);
    const two = await audit(kv, root, "two", 0);
    assert(one.summary.chain.problems > 0, "the forged body breaks the chain");
    // Build 0's confirmation is still there: an outcome for a build never built, in pack 0.
    assertEquals(two.laterBuilds, 2, "packs 0 and 1 on the other thread, -1 and -0 on this one");
    const rows = (await read(`${one.dir}/builds.csv`)).split("\r\n").slice(1, -1);
    assertEquals(rows.map((r) => r.split(",")[0]), ["-64", "0", "0", "64"]);
    assertEquals({ ...two.summary, auditedAt: "" }, { ...one.summary, auditedAt: "" });
    await sameTables(two.dir, one.dir);
  });
});
