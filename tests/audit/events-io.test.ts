import { assert, assertEquals, assertMatch, assertRejects } from "../support/assert.ts";
import type { StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { PROJECTIONS } from "../../events/keys.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { EventStore } from "../../events/store.ts";
import { exportEvents, importEvents, ImportRefused, readLines } from "../../src/audit/events-io.ts";
import { workload } from "./fixtures.ts";

async function exported(kv: Deno.Kv): Promise<string> {
  let out = "";
  await exportEvents(kv, (c) => {
    out += c;
    return Promise.resolve();
  }, { batchSize: 2 });
  return out;
}

const linesOf = (text: string) => readLines(ReadableStream.from([new TextEncoder().encode(text)]));

Deno.test("export -> import -> replay gives the same log and the same projections", async () => {
  const source = await Deno.openKv(":memory:");
  const target = await Deno.openKv(":memory:");
  try {
    await workload(source);
    const ndjson = await exported(source);
    const lines = ndjson.trimEnd().split("\n");
    assertEquals(lines.length, 22);
    assertEquals((JSON.parse(lines[0]) as StoredEvent).position, 1);

    const result = await importEvents(linesOf(ndjson), target);
    assertEquals(result.events, 22);
    const sourceHead = await new EventStore(source, { projections: [] }).head();
    assertEquals(
      { position: result.head?.position, hash: result.head?.hash },
      { position: sourceHead.position, hash: sourceHead.hash },
    );

    const replay = await replayAndCompare(target, allProjections);
    assert(replay.equal, JSON.stringify(replay.mismatches).slice(0, 500));
    // The very documents the store wrote, each written once.
    const docs = async (kv: Deno.Kv) => await Array.fromAsync(kv.list({ prefix: PROJECTIONS }));
    const strip = (es: Deno.KvEntry<unknown>[]) => es.map((e) => [e.key, e.value]);
    assertEquals(strip(await docs(target)), strip(await docs(source)));
    assertEquals(await exported(target), ndjson);

    // The imported KV is a working store: the next append links onto the imported chain.
    const store = new EventStore(target, { projections: allProjections });
    await store.append([{
      stream: "purchase-p1",
      expectedVersion: 3,
      events: [{ type: "KeyBanned", v: 1, data: { keyId: "k1", reason: "test" } }],
    }]);
    assert((await replayAndCompare(target, allProjections)).equal);
  } finally {
    source.close();
    target.close();
  }
});

Deno.test("a tampered, reordered or malformed line is refused with its line number, leaving nothing", async () => {
  const source = await Deno.openKv(":memory:");
  try {
    await workload(source);
    const lines = (await exported(source)).trimEnd().split("\n");
    const cases: [string, string[], RegExp][] = [
      [
        "edited amount",
        lines.map((
          l,
          i,
        ) => (i === 7 ? l.replace('"feeLamports":"19933334"', '"feeLamports":"1"') : l)),
        /^line 8: hash does not match the event's content$/,
      ],
      ["deleted line", lines.filter((_, i) => i !== 9), /^line 10: events 10\.\.10 are missing$/],
      ["swapped lines", [...lines.slice(0, 3), lines[4], lines[3], ...lines.slice(5)], /^line 4: /],
      ["not JSON", [...lines.slice(0, 2), "{oops", ...lines.slice(2)], /^line 3: not valid JSON$/],
      ["not an event", [lines[0], "{}"], /^line 2: not a stored event/],
    ];
    for (const [name, tampered, message] of cases) {
      const target = await Deno.openKv(":memory:");
      try {
        assert(tampered.join("\n") !== lines.join("\n"), name);
        const e = await assertRejects(
          () => importEvents(linesOf(tampered.join("\n")), target),
          ImportRefused,
        );
        assertMatch(e.message, message, name);
        const left = [];
        for await (const entry of target.list({ prefix: [] })) left.push(entry.key);
        assertEquals(left, [], `${name}: target left empty`);
      } finally {
        target.close();
      }
    }
  } finally {
    source.close();
  }
});

Deno.test("import refuses a KV that already holds data", async () => {
  const target = await Deno.openKv(":memory:");
  try {
    await target.set(["x"], 1);
    await assertRejects(() => importEvents([], target), Error, "not empty");
  } finally {
    target.close();
  }
});

Deno.test("readLines splits across chunk boundaries, CRLF and a missing final newline", async () => {
  const enc = new TextEncoder();
  const stream = ReadableStream.from([
    enc.encode('{"a":'),
    enc.encode('1}\r\n{"b"'),
    enc.encode(":2}"),
  ]);
  const out = [];
  for await (const l of readLines(stream)) out.push(l);
  assertEquals(out, ['{"a":1}', '{"b":2}']);
});
