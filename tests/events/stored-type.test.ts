/**
 * Reading an event's type from the end of its stored body, unparsed (codec.ts `storedType`), so a
 * fold can skip the events it has no use for: it must give the type `JSON.parse` gives for every
 * body it answers for, and the log read with `types` must hand out exactly the wanted events.
 */
import { assert, assertEquals } from "../support/assert.ts";
import fc from "fast-check";
import { bodyText, storedType } from "../../events/codec.ts";
import { readEvents, readLog } from "../../events/log.ts";
import { EventStore } from "../../events/store.ts";
import type { DomainEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";

const typeName = fc.stringMatching(/^[A-Za-z0-9]{1,24}$/);

Deno.test("storedType reads the type of any canonical body", () => {
  fc.assert(
    fc.property(
      typeName,
      fc.jsonValue(),
      fc.nat(),
      fc.string(),
      fc.integer({ min: 1, max: 9 }),
      (type, data, position, stream, v) => {
        const body = bodyText(
          { type, v, data, at: 1, position, stream, streamPosition: 1 } as never,
        );
        assertEquals(storedType(body), type);
      },
    ),
  );
});

Deno.test("storedType never names a type JSON.parse would not give", () => {
  // Bodies built to end like a canonical one, around any JSON: nested, in strings, duplicated.
  const tail = fc.tuple(typeName, fc.nat()).map(([t, v]) => `,"type":"${t}","v":${v}}`);
  const crafted = fc.oneof(
    fc.string(),
    fc.jsonValue().map((j) => JSON.stringify(j)),
    fc.tuple(fc.jsonValue(), tail).map(([j, t]) => `{"a":${JSON.stringify(j)}${t}`),
    fc.tuple(fc.jsonValue(), tail).map(([j, t]) => `{"a":{"b":${JSON.stringify(j)}${t}}`),
    fc.tuple(fc.string(), tail).map(([s, t]) => `{"a":${JSON.stringify(s + t)}}`),
    fc.tuple(tail, tail).map(([a, b]) => `{"x":1${a.slice(0, -1)}${b}`),
    fc.tuple(fc.string(), tail).map(([s, t]) => s + t),
  );
  fc.assert(
    fc.property(crafted, (body) => {
      const type = storedType(body);
      if (type === null) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return; // unreadable: no fold reaches it whatever it is taken for
      }
      assert(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed), body);
      assertEquals((parsed as { type: unknown }).type, type, body);
    }),
    { numRuns: 2000 },
  );
  assertEquals(storedType('{"a":{"type":"X","v":1}}'), null);
  assertEquals(storedType('{"a":"\\",\\"type\\":\\"X\\",\\"v\\":1}"}'), null);
  assertEquals(storedType('{"type":"X","v":1,"z":2}'), null);
  assertEquals(storedType('{"type":"X","v":1}'), null, "no member before type: not canonical");
  assertEquals(storedType('{"a":1,"type":"X","v":1}'), "X");
});

Deno.test("a log read for some types hands out exactly those events, the chain intact", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new EventStore(kv, {
      projections: allProjections,
      sealBytes: 1024,
      now: () => 1_700_000_000_000,
    });
    const events: DomainEvent[] = [];
    for (let i = 0; i < 40; i++) {
      events.push(
        i % 3 === 0
          ? { type: "KeyBanned", v: 1, data: { keyId: `k${i}`, reason: "test" } }
          : { type: "KeyBanLifted", v: 1, data: { keyId: `k${i}` } },
      );
    }
    for (const e of events) {
      await store.append([{ stream: "key-1", expectedVersion: "any", events: [e] }]);
    }
    const all = await Array.fromAsync(readEvents(kv));
    const wanted = new Set(["KeyBanned"]);
    const some = (await Array.fromAsync(readLog(kv, { types: wanted }))).flat();
    assertEquals(
      some.map((r) => r.event),
      all.filter((e) => e.type === "KeyBanned"),
      "the same events, each with the hash of the one before it (prevHash) as a full read has",
    );
    assertEquals((await Array.fromAsync(readLog(kv, { types: new Set() }))).flat().length, 0);
  } finally {
    kv.close();
  }
});
