/**
 * The full audit with its live pass in a worker (the audited KV given by path): the same tables,
 * the same state for the next incremental audit, and the same exactness as on one thread.
 */
import { kvWith } from "../support/kv.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { LOG_SEGMENTS, projectionKey } from "../../events/keys.ts";
import type { EventStore } from "../../events/store.ts";
import {
  type Audited,
  auditInto,
  built,
  confirmed,
  purchaseWithKey,
  tablesOf,
  unverified,
  withFileLog,
} from "./fixtures.ts";

const audit = (
  kv: Deno.Kv,
  dir: string,
  name: string,
  opts: { worker: boolean; from?: Audited },
) =>
  auditInto(kv, dir, name, {
    from: opts.from,
    kvPath: opts.worker ? `${dir}/service.sqlite3` : null,
  });

const tables = tablesOf;

/** Every entry of a state KV, values as they are stored. */
async function stateOf(path: string): Promise<[Deno.KvKey, unknown][]> {
  const kv = await Deno.openKv(path);
  try {
    const out: [Deno.KvKey, unknown][] = [];
    for await (const e of kv.list({ prefix: [] })) out.push([e.key, e.value]);
    return out;
  } finally {
    kv.close();
  }
}

const withLog = (fn: (kv: Deno.Kv, store: EventStore, dir: string) => Promise<void>) =>
  withFileLog("tcb-live-worker-", async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    await builds(store, 1, 40);
  }, fn);

async function builds(store: EventStore, from: number, to: number) {
  for (let i = from; i <= to; i++) {
    const events = [built(i, "k1", "p1", "2026-11-22")];
    if (i % 5 === 0) events.push(unverified(i, "k1", "0"));
    else if (i % 4 !== 0) events.push(confirmed(i));
    await store.append([{ stream: `build-${i}`, expectedVersion: 0, events }]);
  }
}

Deno.test("the live pass in a worker: the tables and the state of a one-thread audit", async () => {
  await withLog(async (kv, store, dir) => {
    const one = await audit(kv, dir, "one", { worker: false });
    const two = await audit(kv, dir, "two", { worker: true });
    assertEquals(two.summary.projections.compared, "digest");
    assertEquals(two.summary.projections.mismatches, 0);
    assert(two.summary.projections.documents > 40);
    assertEquals(tables(two), tables(one));
    assertEquals(two.summary, one.summary);
    assert(two.summary.checkpoint, "a clean audit writes a checkpoint");
    // The state the worker packed is the one the one-thread audit writes, entry for entry.
    assertEquals(await stateOf(two.state), await stateOf(one.state));

    // An incremental audit from it writes a full audit's tables.
    await builds(store, 41, 50);
    const inc = await audit(kv, dir, "inc", { worker: false, from: two });
    const full = await audit(kv, dir, "full", { worker: true });
    assertEquals(inc.summary.projections.compared, "incremental");
    assertEquals(tables(inc), tables(full));
  });
});

Deno.test("with the KV's file, the full audit reads the sealed segments from it, not through the KV", async () => {
  await withLog(async (kv, _store, dir) => {
    let listed = 0;
    // The KV the audit is given, its bulk listings of sealed segments counted.
    const counted = kvWith(kv, {
      list: ((selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
        const bulk = options?.limit === undefined && "prefix" in selector;
        if (bulk && String(selector.prefix) === String(LOG_SEGMENTS)) listed++;
        return kv.list(selector, options);
      }) as Deno.Kv["list"],
    });
    let sealed = 0;
    for await (const _ of kv.list({ prefix: LOG_SEGMENTS })) sealed++;
    assert(sealed > 3, `${sealed} segments`);
    const one = await audit(counted, dir, "one", { worker: false });
    assert(listed > 0, "the one-thread audit lists them through the KV");
    listed = 0;
    const two = await audit(counted, dir, "two", { worker: true });
    assertEquals(listed, 0);
    assertEquals(tables(two), tables(one));
    assertEquals(two.summary.checkpoint, one.summary.checkpoint);
  });
});

Deno.test("the live pass in a worker: a document edited behind the store's back is named", async () => {
  await withLog(async (kv, _store, dir) => {
    const key = projectionKey("build", [7]);
    const doc = (await kv.get<Record<string, unknown>>(key)).value!;
    await kv.set(key, { ...doc, feeLamports: "1" });
    const a = await audit(kv, dir, "a", { worker: true });
    assertEquals(a.summary.projections.mismatches, 1);
    assertEquals(a.summary.checkpoint, null);
    const [m] = a.sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch");
    assertMatch(String(m.detail), /^\["p","build",7\]: feeLamports: live "1"/);
  });
});

Deno.test("the live pass in a worker: no false mismatch while the service writes", async () => {
  await withLog(async (kv, store, dir) => {
    const head = await store.head();
    let stop = false;
    let written = 0;
    const writer = (async () => {
      for (let i = 1_000; !stop; i++, written++) {
        await builds(store, i, i);
        // An old document moves too: build 4 was left open.
        if (i === 1_000) {
          await store.append([{
            stream: "build-4",
            expectedVersion: "any",
            events: [confirmed(4)],
          }]);
        }
        await new Promise((r) => setTimeout(r, 0));
      }
    })();
    const a = await audit(kv, dir, "a", { worker: true });
    stop = true;
    await writer;
    assert(written > 0, "the writer never ran during the audit");
    assertEquals(a.sink.rows("exceptions").filter((r) => r.kind === "projection_mismatch"), []);
    assertEquals(a.summary.projections.mismatches, 0);
    assertEquals(a.summary.projections.compared, "digest");
    assertEquals(a.summary.events, head.position);
  });
});
