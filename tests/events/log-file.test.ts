/**
 * The log read with its KV's file at hand (`ReadOptions.file`): the sealed segments come from the
 * file in one statement, the rest through the KV. Everything a reader sees must be what the read
 * through the KV gives, and the event loop must still turn while the file is read.
 */
import { kvWith } from "../support/kv.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { KvFile } from "../../events/kv-file.ts";
import { type ReadEvent, readLog, type ReadOptions } from "../../events/log.ts";
import { HEAD, LOG_SEGMENTS, type LogHead } from "../../events/keys.ts";
import { EventStore } from "../../events/store.ts";
import type { DomainEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { eventLoopTurn } from "../../src/kernel/event-loop.ts";
import { DatabaseSync } from "node:sqlite";
import { encodeKvKey } from "../../events/kv-key-codec.ts";

async function withFileLog(
  events: number,
  fn: (kv: Deno.Kv, file: KvFile) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/log.sqlite3`;
  const kv = await Deno.openKv(path);
  const file = KvFile.open(path)!;
  try {
    const store = new EventStore(kv, {
      projections: allProjections,
      sealBytes: 1024,
      now: () => 1,
    });
    for (let i = 0; i < events; i += 3) {
      const batch: DomainEvent[] = [0, 1, 2].map((j) => ({
        type: "KeyBanLifted",
        v: 1,
        data: { keyId: `k${i + j}${"é".repeat((i + j) % 4)}` },
      }));
      await store.append([{ stream: `s${i % 5}`, expectedVersion: "any", events: batch }]);
    }
    await fn(kv, file);
  } finally {
    file.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Segment listings through the KV, counted. */
let segmentLists = 0;

/** The KV, with its listings of segments counted. */
const counting = (kv: Deno.Kv): Deno.Kv =>
  kvWith(kv, {
    list: ((selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
      // The bulk read: `hashAt` before a `from` lists one segment through the KV either way.
      const bulk = options?.limit === undefined;
      if ("prefix" in selector && selector.prefix[1] === LOG_SEGMENTS[1] && bulk) segmentLists++;
      return kv.list(selector, options);
    }) as Deno.Kv["list"],
  });

/** What a read hands out and notes, to compare two reads by. */
async function read(kv: Deno.Kv, opts: ReadOptions) {
  const events: ReadEvent[] = [];
  const segments: [number, string][] = [];
  const stats = { reads: 0, onSegment: (last: number, vs: string) => segments.push([last, vs]) };
  for await (const batch of readLog(counting(kv), { ...opts, stats })) events.push(...batch);
  return { events, segments, reads: stats.reads };
}

Deno.test("the log read with its file hands out what the read through the KV does", async () => {
  await withFileLog(300, async (kv, file) => {
    let sealed = 0;
    for await (const _ of kv.list({ prefix: LOG_SEGMENTS })) sealed++;
    assert(sealed > 20, `${sealed} segments`);
    for (
      const opts of [
        {},
        { from: 37, to: 251 },
        { from: 290 },
        { types: new Set(["KeyBanLifted"]), batchSize: 7 },
        { types: new Set(["Nothing"]) },
      ] as ReadOptions[]
    ) {
      segmentLists = 0;
      const viaKv = await read(kv, opts);
      assert(segmentLists > 0);
      segmentLists = 0;
      const viaFile = await read(kv, { ...opts, file });
      assertEquals(segmentLists, 0, "segments listed through the KV");
      assertEquals(viaFile, viaKv, JSON.stringify(opts, (_, v) => v instanceof Set ? [...v] : v));
    }
    // The versionstamps are the KV's own, segment by segment.
    const listed = [];
    for await (const s of kv.list({ prefix: LOG_SEGMENTS })) {
      listed.push([s.key[LOG_SEGMENTS.length], s.versionstamp]);
    }
    assertEquals((await read(kv, { file })).segments, listed);
  });
});

Deno.test("a segment a file holds as something other than bytes reads as the KV reads it", async () => {
  await withFileLog(60, async (kv, file) => {
    // Rewritten behind the store's back as a string: the KV hands out the string, and so must
    // the file (the chain check then finds what it finds, the same either way).
    for await (const s of kv.list<Uint8Array>({ prefix: LOG_SEGMENTS }, { limit: 1 })) {
      await kv.set(s.key, new TextDecoder().decode(s.value));
    }
    assertEquals(await read(kv, { file }), await read(kv, {}));
  });
});

Deno.test("while the file is read, messages waiting on the event loop are handled", async () => {
  await withFileLog(900, async (kv, file) => {
    const head = (await kv.get<LogHead>(HEAD)).value!;
    const channel = new MessageChannel();
    let handled = -1;
    let at = 0;
    channel.port2.onmessage = () => (handled = at);
    try {
      channel.port1.postMessage("from a worker, say");
      // With the head given, nothing here waits for the KV until the tail: without turns, the
      // message would only be handled once every segment had been read.
      for await (const batch of readLog(kv, { head, file, batchSize: 10 })) at += batch.length;
      assert(head.sealed! > 600, `${head.sealed} sealed`);
      assert(handled >= 0 && handled < head.sealed! - 100, `handled after ${handled} events`);
    } finally {
      channel.port1.close();
      channel.port2.close();
    }
  });
});

Deno.test("a turn of the event loop lets waiting messages through, and leaves nothing open", async () => {
  const channel = new MessageChannel();
  const got: string[] = [];
  channel.port2.onmessage = (m) => got.push(m.data);
  try {
    channel.port1.postMessage("waiting");
    // Two at once both end (each has its own channel); the test's sanitizers find none left.
    await Promise.all([eventLoopTurn(), eventLoopTurn()]);
    await eventLoopTurn();
    assertEquals(got, ["waiting"]);
  } finally {
    channel.port1.close();
    channel.port2.close();
  }
});

Deno.test("a reader with the file racing a seal still reads every event once, in order", async () => {
  await withFileLog(60, async (kv, file) => {
    const store = new EventStore(kv, {
      projections: allProjections,
      sealBytes: 1024,
      now: () => 1,
    });
    const seen: number[] = [];
    let appended = 0;
    for await (const batch of readLog(kv, { file, batchSize: 1 })) {
      for (const r of batch) seen.push(r.event.position);
      if (appended < 40) {
        const e: DomainEvent = { type: "KeyBanLifted", v: 1, data: { keyId: "late" } };
        await store.append([{ stream: "s", expectedVersion: "any", events: [e] }]);
        appended++;
      }
    }
    const head = (await kv.get<LogHead>(HEAD)).value!;
    assertEquals(seen.slice(0, 60), Array.from({ length: 60 }, (_, i) => i + 1));
    assertEquals(seen, Array.from({ length: seen.length }, (_, i) => i + 1));
    assert(seen.length <= head.position);
  });
});

/** Writes to the KV's file behind Deno KV's back, as someone with the file could. */
function behindTheKv(file: KvFile, sql: string): void {
  const db = new DatabaseSync(file.db.location()!);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

Deno.test("a segment's versionstamp from the file is the KV's, whatever the row's seq says", async () => {
  await withFileLog(60, async (kv, file) => {
    behindTheKv(file, "update kv set seq = 7");
    assertEquals((await read(kv, { file })).segments, (await read(kv, {})).segments);
  });
});

Deno.test("a segment stored as text fails the file's read as it fails the KV's", async () => {
  await withFileLog(60, async (kv, file) => {
    // The first sealed segment's row, by its encoded key.
    const prefix = [...encodeKvKey(LOG_SEGMENTS)].map((b) => b.toString(16).padStart(2, "0"));
    const under = `k > x'${prefix.join("")}' and k < x'${prefix.join("")}ff'`;
    behindTheKv(
      file,
      `update kv set v = cast(v as text) where k = (select min(k) from kv where ${under})`,
    );
    const failure = async (opts: ReadOptions) => {
      try {
        await read(kv, opts);
        return null;
      } catch (e) {
        return e;
      }
    };
    assert(await failure({}) !== null, "the KV read the text");
    assertMatch(String(await failure({ file })), /not a blob/);
  });
});
