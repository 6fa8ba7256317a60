/**
 * An incremental audit splices the builds table from the earlier audit's files instead of
 * writing it again: given builds that change status after the checkpoint (in the middle of the
 * table, at its first row), new builds, a build by a key never issued and an outcome for a build
 * never built, when it audits from the checkpoint, then every table (CSV and JSON) is byte for
 * byte the full audit's of the same log, and a splice from a spliced audit is too.
 */
import { assertEquals } from "../support/assert.ts";
import { EventStore } from "../../events/store.ts";
import type { DomainEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { AUDIT_TABLES, type AuditSummary, runAudit } from "../../src/audit/audit.ts";
import { FileSink } from "../../src/audit/sink.ts";
import { TABLES_INDEX } from "../../src/audit/table-splice.ts";
import { built, confirmed, DAY1, purchaseWithKey, unverified } from "./fixtures.ts";

interface Audited {
  summary: AuditSummary;
  dir: string;
  state: string;
}

async function audit(kv: Deno.Kv, root: string, name: string, from?: Audited): Promise<Audited> {
  const dir = `${root}/${name}`;
  const state = `${root}/${name}.sqlite3`;
  if (from) await Deno.copyFile(from.state, state);
  const scratch = await Deno.openKv(state);
  try {
    const summary = await runAudit({
      kv,
      scratch,
      sink: await FileSink.create(dir, AUDIT_TABLES),
      from: from?.summary.checkpoint ?? null,
      fromDir: from?.dir ?? null,
      tablesIndex: true,
      now: () => 0,
    });
    return { summary, dir, state };
  } finally {
    scratch.close();
  }
}

/** The splice's working copies (`*.part`) are gone once the audit is done. */
async function noPartFiles(dir: string) {
  for await (const f of Deno.readDir(dir)) assertEquals(f.name.endsWith(".part"), false, f.name);
}

async function sameFiles(a: string, b: string) {
  for (const t of Object.keys(AUDIT_TABLES)) {
    for (const ext of ["csv", "json"]) {
      const [x, y] = [
        await Deno.readFile(`${a}/${t}.${ext}`),
        await Deno.readFile(`${b}/${t}.${ext}`),
      ];
      assertEquals(new TextDecoder().decode(x), new TextDecoder().decode(y), `${t}.${ext}`);
    }
  }
}

const append = (store: EventStore, stream: string, events: DomainEvent[]) =>
  store.append([{ stream, expectedVersion: "any", events }]);

async function withLog(fn: (kv: Deno.Kv, store: EventStore, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "tcb-splice-" });
  const kv = await Deno.openKv(`${dir}/service.sqlite3`);
  const store = new EventStore(kv, {
    projections: allProjections,
    sealBytes: 2048,
    now: () => DAY1,
  });
  try {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 12; i++) {
      const events = [built(i, "k1", "p1", i < 7 ? "2026-11-21" : "2026-11-22")];
      // Every third confirmed, every fifth fee-less; the rest left open. Non-ASCII names too.
      if (i % 5 === 0) events.push(unverified(i, "k1", "0"));
      else if (i % 3 === 0) events.push(confirmed(i));
      if (i === 7) (events[0].data as { name: string }).name = "Jeton «été» 🚀";
      await append(store, `build-${i}`, events);
    }
    // Fee-less, in another pack of the state (folds.ts packs 64 builds): the splice reads the
    // builds with exceptions from both.
    await append(store, "build-130", [
      built(130, "k1", "p1", "2026-11-22"),
      unverified(130, "k1", "0"),
    ]);
    await fn(kv, store, dir);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("an incremental audit splices the builds table into the full audit's bytes", async () => {
  await withLog(async (kv, store, dir) => {
    const first = await audit(kv, dir, "first");
    assertEquals(first.summary.tables, "written");
    await Deno.stat(`${first.dir}/${TABLES_INDEX}`);

    // Old builds change in the middle of the table (4 confirmed; 8 fee-less: a new exception),
    // new builds (one by a key never issued, one on a new day), an outcome for a build never
    // built, and a new key.
    await append(store, "build-4", [confirmed(4)]);
    await append(store, "build-8", [unverified(8, "k1", "0")]);
    for (let i = 13; i <= 16; i++) {
      await append(store, `build-${i}`, [built(i, i === 15 ? "kX" : "k1", "p1", "2026-11-23")]);
    }
    await append(store, "build-14", [confirmed(14, "1")]); // short fee: an exception
    await append(store, "build-40", [confirmed(40)]);
    await append(store, "build-200", [confirmed(200)]); // in a pack the state did not have
    await purchaseWithKey(store, "p2", "k2", "WalletB");
    await append(store, "build-17", [built(17, "k2", "p2", "2026-11-20")]);

    const inc = await audit(kv, dir, "inc", first);
    const full = await audit(kv, dir, "full");
    assertEquals(inc.summary.tables, "spliced");
    await noPartFiles(inc.dir);
    assertEquals(inc.summary.builds, full.summary.builds);
    assertEquals(inc.summary.exceptions, full.summary.exceptions);
    assertEquals(inc.summary.orphanOutcomes, full.summary.orphanOutcomes);
    await sameFiles(inc.dir, full.dir);

    // From the spliced audit on: the first row changes (a second outcome after a final one).
    await append(store, "build-3", [confirmed(3)]);
    await append(store, "build-18", [built(18, "kX", "p1", "2026-11-23")]);
    const inc2 = await audit(kv, dir, "inc2", inc);
    const full2 = await audit(kv, dir, "full2");
    assertEquals(inc2.summary.tables, "spliced");
    assertEquals(inc2.summary.exceptions, full2.summary.exceptions);
    await sameFiles(inc2.dir, full2.dir);

    // Nothing new to splice: the tables are copied as they are.
    const inc3 = await audit(kv, dir, "inc3", inc2);
    assertEquals(inc3.summary.tables, "spliced");
    await sameFiles(inc3.dir, full2.dir);
  });
});

Deno.test("tables that do not match their index are written in full, not spliced", async () => {
  await withLog(async (kv, store, dir) => {
    const first = await audit(kv, dir, "first");
    await append(store, "build-4", [confirmed(4)]);
    // Shortened behind the audit's back: the sizes no longer match the index.
    const csv = await Deno.readTextFile(`${first.dir}/builds.csv`);
    await Deno.writeTextFile(`${first.dir}/builds.csv`, csv.slice(0, -10));
    const inc = await audit(kv, dir, "inc", first);
    const full = await audit(kv, dir, "full");
    assertEquals(inc.summary.tables, "written");
    await sameFiles(inc.dir, full.dir);

    // A build that moves to another key after the checkpoint (TokenBuilt repeated): written too.
    await append(store, "build-5", [built(5, "kX", "p1", "2026-11-21")]);
    const inc2 = await audit(kv, dir, "inc2", inc);
    const full2 = await audit(kv, dir, "full2");
    assertEquals(inc2.summary.tables, "written");
    await noPartFiles(inc2.dir);
    await sameFiles(inc2.dir, full2.dir);
  });
});
