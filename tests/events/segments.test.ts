/**
 * The log layout: events are appended as tail lines and sealed into segments inside the append's
 * own commit; readers see one ordered log whatever is sealed, and tampering inside a segment is
 * found like tampering anywhere else.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { decodeSegment, packSegments, SEGMENT_BYTES } from "../../events/codec.ts";
import { eventHash } from "../../events/hash.ts";
import { HEAD, LOG_SEGMENTS, LOG_TAIL, type LogHead } from "../../events/keys.ts";
import { readEvents, releaseBytes } from "../../events/log.ts";
import { EventStore } from "../../events/store.ts";
import type { DomainEvent, StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { verifyChain } from "../../src/audit/log-chain.ts";
import { deleteEvent, isSealed, rewriteEvent, storedEvent } from "./support/tamper.ts";

const banLifted = (i: number, pad = 0): DomainEvent => ({
  type: "KeyBanLifted",
  v: 1,
  data: { keyId: `k${i}${"x".repeat(pad)}` },
});

async function count(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

async function withLog(
  events: number,
  fn: (kv: Deno.Kv, store: EventStore) => Promise<void>,
  opts: { sealBytes?: number; perAppend?: number } = {},
) {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new EventStore(kv, {
      projections: allProjections,
      sealBytes: opts.sealBytes ?? 1024,
      now: () => 1_700_000_000_000,
    });
    const per = opts.perAppend ?? 1;
    for (let i = 0; i < events; i += per) {
      await store.append([{
        stream: `key-${i % 7}`,
        expectedVersion: "any",
        events: Array.from({ length: Math.min(per, events - i) }, (_, j) => banLifted(i + j)),
      }]);
    }
    await fn(kv, store);
  } finally {
    kv.close();
  }
}

Deno.test("appends seal the tail into segments; the log reads the same, hashes as eventHash", async () => {
  await withLog(200, async (kv, store) => {
    const head = (await kv.get<LogHead>(HEAD)).value!;
    assertEquals(head.position, 200);
    assert(head.sealed! > 0 && head.sealed! <= 200);
    assert((await count(kv, LOG_SEGMENTS)) > 1, "no segments were sealed");
    assertEquals(await count(kv, LOG_TAIL), 200 - head.sealed!);

    const events: StoredEvent[] = [];
    for await (const e of store.readAll()) events.push(e);
    assertEquals(events.map((e) => e.position), Array.from({ length: 200 }, (_, i) => i + 1));
    for (const e of events) {
      const { hash, ...rest } = e;
      assertEquals(await eventHash(rest), hash);
    }
    for (let i = 1; i < events.length; i++) assertEquals(events[i].prevHash, events[i - 1].hash);
    // Reading from the middle of a segment links to the event before it.
    const from = [] as StoredEvent[];
    for await (const e of store.readAll({ from: 57 })) from.push(e);
    assertEquals(from.map((e) => e.hash), events.slice(56).map((e) => e.hash));
    assertEquals(from[0].prevHash, events[55].hash);
    // A stream reads back from segments and tail alike.
    const stream = await store.readStream("key-3");
    assertEquals(
      stream.map((e) => e.position),
      events.filter((e) => e.stream === "key-3")
        .map((e) => e.position),
    );
    assertEquals(stream.map((e) => e.prevHash), stream.map((e) => events[e.position - 2].hash));

    assert((await verifyChain(kv)).ok);
    assert((await replayAndCompare(kv, allProjections)).equal);
  });
});

Deno.test("appends of several events at once seal whole; segments stay under the value limit", async () => {
  await withLog(
    90,
    async (kv) => {
      for await (const s of kv.list<Uint8Array>({ prefix: LOG_SEGMENTS })) {
        assert(s.value.byteLength <= SEGMENT_BYTES);
        const records = decodeSegment(s.value);
        assertEquals(records[records.length - 1].slot, s.key[2]);
      }
      assert((await verifyChain(kv)).ok);
    },
    { sealBytes: 50 * 1024, perAppend: 9 },
  );
  // Events near the size limit pack one or two to a segment.
  const lines = Array.from({ length: 5 }, (_, i) => `${"a".repeat(64)}\t${"x".repeat(30_000 + i)}`);
  const segs = packSegments(10, lines);
  assert(segs.every((s) => s.value.byteLength <= SEGMENT_BYTES));
  assertEquals(segs.flatMap((s) => decodeSegment(s.value).map((r) => r.slot)), [
    10,
    11,
    12,
    13,
    14,
  ]);
});

Deno.test("a reader racing a seal still reads every event once, in order", async () => {
  await withLog(60, async (kv, store) => {
    const seen: number[] = [];
    let appended = 0;
    // Append (and so seal) while the reader is between batches.
    for await (const e of readEvents(kv, { batchSize: 1 })) {
      seen.push(e.position);
      if (appended < 40) {
        await store.append([{ stream: "s", expectedVersion: "any", events: [banLifted(900)] }]);
        appended++;
      }
    }
    assertEquals(seen, Array.from({ length: 60 }, (_, i) => i + 1));
  });
});

Deno.test("an edited, deleted or reordered event inside a sealed segment breaks the chain there", async () => {
  for (const tamper of ["edit", "delete", "swap"] as const) {
    await withLog(120, async (kv) => {
      assert(await isSealed(kv, 10), "event 10 should be in a segment");
      if (tamper === "edit") {
        await rewriteEvent(kv, 10, (e) => ({ ...e, data: { keyId: "forged" } }));
      } else if (tamper === "delete") {
        await deleteEvent(kv, 10);
      } else {
        const e11 = await storedEvent(kv, 11);
        await rewriteEvent(kv, 10, () => ({ ...e11, position: 10 }));
      }
      const v = await verifyChain(kv);
      assert(!v.ok, `${tamper} went unnoticed`);
      assertEquals(Math.min(...v.problems.map((p) => p.position)) <= 11, true);
    });
  }
});

Deno.test("reading the log frees each segment's bytes once its text is decoded", async () => {
  await withLog(200, async (kv) => {
    const segments: Uint8Array[] = [];
    // The KV as readLog sees it, keeping a hand on every segment value it is given.
    const watched = {
      get: kv.get.bind(kv),
      getMany: kv.getMany.bind(kv),
      list: (selector: Deno.KvListSelector, options?: Deno.KvListOptions) =>
        (async function* () {
          for await (const entry of kv.list(selector, options)) {
            if (entry.key[0] === LOG_SEGMENTS[0] && entry.key[1] === LOG_SEGMENTS[1]) {
              segments.push(entry.value as Uint8Array);
            }
            yield entry;
          }
        })(),
    } as unknown as Deno.Kv;
    const read: StoredEvent[] = [];
    for await (const e of readEvents(watched)) read.push(e);
    const expected: StoredEvent[] = [];
    for await (const e of readEvents(kv)) expected.push(e);
    assertEquals(read, expected);
    assertEquals(read.length, 200);
    assert(segments.length > 1, `${segments.length} segments read`);
    for (const value of segments) {
      assert((value.buffer as ArrayBuffer).detached, "a segment's bytes were kept");
    }
  });
});

Deno.test("releaseBytes frees a value that is its whole buffer, and never a view into a larger one", () => {
  const whole = new Uint8Array([1, 2, 3, 4]);
  releaseBytes(whole);
  assert((whole.buffer as ArrayBuffer).detached);
  assertEquals(whole.byteLength, 0);
  const shared = new Uint8Array([1, 2, 3, 4, 5, 6]);
  const view = shared.subarray(1, 4);
  releaseBytes(view);
  assert(!(shared.buffer as ArrayBuffer).detached);
  assertEquals([...view], [2, 3, 4]);
  assertEquals([...shared], [1, 2, 3, 4, 5, 6]);
});
