/**
 * The live side of the digest read from a KV file's rows (projections/live-file.ts) adds up to
 * the same digest as the listing through Deno.Kv (doc-digest.ts), strays and moved documents
 * included, and hands each document on as the line the audit's state stores.
 */
import { digestLiveProjections, docText, ProjectionDigest } from "../../projections/doc-digest.ts";
import { digestLiveFile } from "../../projections/live-file.ts";
import { KvFile, logHeadPosition } from "../../events/kv-file.ts";
import { encodeKvKey } from "../../events/kv-key-codec.ts";
import { HEAD } from "../../events/keys.ts";
import { DatabaseSync } from "node:sqlite";
import { keyId } from "../../projections/key-hash.ts";
import { LiveCut } from "../../projections/live-cut.ts";
import { allProjections } from "../../projections/index.ts";
import { EventStore } from "../../events/store.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { built, confirmed, DAY1, purchaseWithKey } from "../audit/fixtures.ts";

const names = allProjections.map((p) => p.name);
const dec = new TextDecoder();

async function withKvFile(fn: (kv: Deno.Kv, path: string, store: EventStore) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "tcb-live-file-" });
  const path = `${dir}/kv.sqlite3`;
  const kv = await Deno.openKv(path);
  try {
    const store = new EventStore(kv, { projections: allProjections, now: () => DAY1 });
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 12; i++) {
      await store.append([{
        stream: `build-${i}`,
        expectedVersion: 0,
        events: i % 3
          ? [built(i, "k1", "p1", "2026-11-22"), confirmed(i)]
          : [built(i, "k1", "p1", "2026-11-22")],
      }]);
    }
    await fn(kv, path, store);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("live file: the same digest as the listing, with each document's line", async () => {
  await withKvFile(async (kv, path) => {
    // What the transcoder leaves to node:v8, a stray, a document with a bigint key and a null.
    await kv.set(["p", "build", 9001], { at: new Date(0), n: 10n, list: [1, , 3] });
    await kv.set(["p", "build", 9002n], { bigintKey: true });
    await kv.set(["p", "nobody_projects_this", 1], { stray: true });
    // A stray whose name starts like a projection's, up to an escaped NUL.
    await kv.set(["p", "build\u0000x", 1], { stray: true });
    // Expired, but Deno.Kv still hands it out until its clean-up runs: so must the file reader.
    await kv.set(["p", "build", 9004], { expiring: true }, { expireIn: 1 });
    await new Promise((r) => setTimeout(r, 20));
    await kv.set(["p", "build", 9003], null);
    const listed = await digestLiveProjections(kv, names, "salt");
    const file = KvFile.open(path)!;
    const lines: string[] = [];
    const stats = { slowValues: 0 };
    const read = await digestLiveFile(
      file,
      names,
      new ProjectionDigest("salt"),
      undefined,
      (line, idEnd, keyOf) => {
        const text = dec.decode(line);
        assertEquals(text[idEnd], "\t");
        assertEquals(keyId(keyOf()), text.slice(0, idEnd));
        lines.push(text);
      },
      stats,
    );
    file.close();
    assert(read.digest.equals(listed.digest), "same digest");
    assertEquals(read.strays, 2);
    assertEquals(listed.strays, 2);
    assertEquals(stats.slowValues, 1);
    const expected: string[] = [];
    for await (const e of kv.list({ prefix: ["p"] })) {
      if (e.value === null || !names.includes(e.key[1] as string)) continue;
      expected.push(`${keyId(e.key)}\t${docText(e.value)}`);
    }
    assertEquals(lines, expected);
  });
});

Deno.test("live file: documents moved after the head are left out, as the listing leaves them", async () => {
  await withKvFile(async (kv, path, store) => {
    const head = await store.head();
    // Moves the build-3 documents and adds build 13's after the head.
    await store.append([{ stream: "build-3", expectedVersion: "any", events: [confirmed(3)] }]);
    await store.append([{
      stream: "build-13",
      expectedVersion: 0,
      events: [built(13, "k1", "p1", "2026-11-22")],
    }]);
    const cutA = new LiveCut(kv, allProjections, head);
    const listed = await digestLiveProjections(kv, names, "salt", cutA);
    const cutB = new LiveCut(kv, allProjections, head);
    const file = KvFile.open(path)!;
    const read = await digestLiveFile(file, names, new ProjectionDigest("salt"), cutB);
    file.close();
    assert(cutB.moved.size > 0, "documents moved");
    assertEquals([...cutB.moved.keys()].sort(), [...cutA.moved.keys()].sort());
    assert(read.digest.equals(listed.digest), "same digest");
  });
});

Deno.test("KV file: the reads of one snapshot do not see a commit made meanwhile; the next read does", async () => {
  await withKvFile(async (_kv, path, store) => {
    const position = (await store.head()).position;
    const file = KvFile.open(path)!;
    const writer = new DatabaseSync(path);
    try {
      const inside = file.inSnapshot(() => {
        const first = logHeadPosition(file);
        writer.prepare("delete from kv where k = ?").run(encodeKvKey(HEAD));
        return [first, logHeadPosition(file)];
      });
      assertEquals(inside, [position, position]);
      assertEquals(logHeadPosition(file), 0);
    } finally {
      writer.close();
      file.close();
    }
  });
});
