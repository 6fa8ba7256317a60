/**
 * Migrating a log from the first layout (one KV entry per event): events:export reads it,
 * events:import writes the sealed layout, and the audit finds the same log and the same tables.
 */
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { HEAD, LOG, LOG_LAYOUT, LOG_SEGMENTS, type LogHead } from "../../events/keys.ts";
import { LegacyLayoutError } from "../../events/log.ts";
import { EventStore } from "../../events/store.ts";
import { allProjections } from "../../projections/index.ts";
import { AUDIT_TABLES, runAudit } from "../../src/audit/audit.ts";
import { exportEvents, importEvents, readLines } from "../../src/audit/events-io.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { writeSyntheticLog } from "../../bench/lib/synthetic-log.ts";

async function auditOf(kv: Deno.Kv) {
  const scratch = await Deno.openKv(":memory:");
  const sink = new MemorySink();
  try {
    const summary = await runAudit({ kv, scratch, sink, now: () => 0 });
    return { summary, tables: Object.keys(AUDIT_TABLES).map((t) => sink.rows(t)) };
  } finally {
    scratch.close();
  }
}

async function count(kv: Deno.Kv, prefix: Deno.KvKey) {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

Deno.test("an old-layout log exports, imports into the new layout and audits the same", async () => {
  const old = await Deno.openKv(":memory:");
  const migrated = await Deno.openKv(":memory:");
  try {
    await writeSyntheticLog(old, 1_500, { layout: "legacy" });
    assertEquals(await count(old, LOG), 1_500);
    const oldHead = (await old.get<LogHead>(HEAD)).value!;
    assertEquals(oldHead.layout, undefined);

    // The store will not append to the old layout, so nothing is written half in each.
    const store = new EventStore(old, { projections: allProjections });
    await assertRejects(
      () =>
        store.append([{ stream: "s", expectedVersion: "any", events: [] }, {
          stream: "s",
          expectedVersion: "any",
          events: [{ type: "KeyBanLifted", v: 1, data: { keyId: "k" } }],
        }]),
      LegacyLayoutError,
    );

    const before = await auditOf(old);
    assert(before.summary.chain.ok);
    assertEquals(before.summary.projections.mismatches, 0);

    let ndjson = "";
    const exported = await exportEvents(old, (c) => {
      ndjson += c;
      return Promise.resolve();
    });
    assertEquals(exported.events, 1_500);
    const imported = await importEvents(
      readLines(ReadableStream.from([new TextEncoder().encode(ndjson)])),
      migrated,
      { expectHead: oldHead.hash },
    );
    assertEquals(imported.head?.position, 1_500);
    assertEquals(imported.head?.hash, oldHead.hash);
    assertEquals(imported.head?.layout, LOG_LAYOUT);
    assertEquals(await count(migrated, LOG), 0);
    assert((await count(migrated, LOG_SEGMENTS)) > 1);

    const after = await auditOf(migrated);
    assertEquals(after.tables, before.tables);
    assertEquals(after.summary.builds, before.summary.builds);
    assertEquals(after.summary.exceptions, before.summary.exceptions);
    assertEquals(after.summary.head?.hash, before.summary.head?.hash);
    assertEquals(after.summary.projections.documents, before.summary.projections.documents);

    // The migrated KV takes appends again, chained on.
    const next = new EventStore(migrated, { projections: allProjections });
    const [e] = await next.append([{
      stream: "s",
      expectedVersion: "any",
      events: [{ type: "KeyBanLifted", v: 1, data: { keyId: "k" } }],
    }]);
    assertEquals(e.prevHash, oldHead.hash);
    assert((await auditOf(migrated)).summary.chain.ok);
  } finally {
    old.close();
    migrated.close();
  }
});
