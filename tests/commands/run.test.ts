/**
 * runCommand, given/when/then on a real EventStore (in-memory KV, the registered projections):
 * given events in the log, when a command runs, then the events it appended, the documents its
 * typed reads return, its answer, or the API error its rejection names, and the idempotency
 * record written in the same commit as the events.
 */
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { EventStore, GuardChangedError, type Tx } from "../../events/store.ts";
import type { DomainEvent, EventOf } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { fixedClock } from "../../src/kernel/clock.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import { reject, type Rejection } from "../../src/kernel/rejection.ts";
import type { IdempotencyScope } from "../../src/idempotency/record.ts";
import { kvReads, read, readMany } from "../../src/commands/read.ts";
import { type CommandHandler, runCommand } from "../../src/commands/run.ts";
import { accessCommands } from "../../src/domain/access/handle.ts";
import { SAMPLES } from "../projections/support/events.ts";

const T = 1_800_000_000_000;

async function given(events: DomainEvent[]) {
  const kv = await Deno.openKv(":memory:");
  const store = new EventStore(kv, { projections: allProjections, now: () => T });
  if (events.length > 0) {
    await store.append([{ stream: "purchase-pur1", expectedVersion: 0, events }]);
  }
  return { kv, store, [Symbol.asyncDispose]: () => Promise.resolve(kv.close()) };
}

const paidWithKey: DomainEvent[] = [
  SAMPLES.AccessPaymentQuoted,
  SAMPLES.AccessPurchased,
  SAMPLES.KeyIssued,
];

/** A command over one key document: bans it with a note of the decision's `now`. */
type Ban = { keyId: string; reason: string };
type BanEvent = EventOf<"KeyBanned">;
function banHandler(seen: { loads: number; nows: number[] }): CommandHandler<
  Ban,
  KeyDoc | null,
  BanEvent,
  Rejection,
  { banned: string }
> {
  return {
    async load(tx: Tx, cmd) {
      seen.loads++;
      return await read(tx, keysProjection, [cmd.keyId]);
    },
    decide(cmd, key, now) {
      seen.nows.push(now);
      if (!key) return reject("not_found", "key not found", { keyId: "unknown" });
      if (key.banned) return [];
      return [{
        type: "KeyBanned",
        v: 1,
        data: { keyId: cmd.keyId, reason: `${cmd.reason}@${now}` },
      }];
    },
    stream: (_cmd, key) => `purchase-${key!.purchaseId}`,
    respond: (events, _key, cmd) => ({ banned: events.length > 0 ? cmd.keyId : "already" }),
  };
}

async function marker(kv: Deno.Kv, key: Deno.KvKey): Promise<IdempotencyScope> {
  const m = await kv.set(key, { state: "in-flight" });
  return {
    kvKey: key,
    bodyHash: "h1",
    expiresAt: T + 1,
    stored: false,
    markerVersionstamp: m.versionstamp,
  };
}

Deno.test("runCommand: typed reads load the state, decide gets it and the clock's now, the events land on the stream at its version", async () => {
  await using g = await given(paidWithKey);
  const seen = { loads: 0, nows: [] as number[] };
  const { result, events } = await runCommand(
    banHandler(seen),
    { keyId: "key1", reason: "abuse" },
    {
      store: g.store,
      clock: fixedClock(T + 5),
    },
  );
  assertEquals(result, { banned: "key1" });
  assertEquals(seen.nows, [T + 5]);
  assertEquals(
    events.map((
      e,
    ) => [e.type, e.stream, e.streamPosition, e.type === "KeyBanned" && e.data.reason]),
    [
      ["KeyBanned", "purchase-pur1", 4, `abuse@${T + 5}`],
    ],
  );
  // The projection folded it in the same commit; the typed read returns a KeyDoc.
  const key = await read(kvReads(g.kv), keysProjection, ["key1"]);
  assertEquals(key?.banned, `abuse@${T + 5}`);
});

Deno.test("runCommand: readMany returns each projection's document in order, null where none", async () => {
  await using g = await given(paidWithKey);
  await g.store.transact(async (tx) => {
    const [key, purchase, none] = await readMany(
      tx,
      [
        [keysProjection, ["key1"]],
        [purchasesProjection, ["pur1"]],
        [keysProjection, ["nope"]],
      ] as const,
    );
    assertEquals([key?.keyId, purchase?.status, none], ["key1", "paid", null]);
    return { result: null };
  });
});

Deno.test("runCommand: a rejection appends nothing, writes no record and throws the API error it names", async () => {
  await using g = await given([]);
  const scope = await marker(g.kv, ["idem", "r"]);
  const before = await g.store.head();
  const err = await assertRejects(
    () =>
      runCommand(banHandler({ loads: 0, nows: [] }), { keyId: "ghost", reason: "x" }, {
        store: g.store,
        clock: fixedClock(T),
        idempotency: { scope, status: 200 },
      }),
    ApiError,
  ) as ApiError;
  assertEquals([err.code, err.status, err.fields], ["not_found", 404, { keyId: "unknown" }]);
  assertEquals(await g.store.head(), before);
  assertEquals(scope.stored, false);
  assertEquals((await g.kv.get(["idem", "r"])).value, { state: "in-flight" });
});

Deno.test("runCommand: a handler's own rejection mapping is used", async () => {
  await using g = await given([]);
  const handler = {
    ...banHandler({ loads: 0, nows: [] }),
    rejected: (r: Rejection) => new Error(`mapped ${r.rejected}`),
  };
  const err = await assertRejects(
    () =>
      runCommand(handler, { keyId: "ghost", reason: "x" }, {
        store: g.store,
        clock: fixedClock(T),
      }),
    Error,
  );
  assertEquals(err.message, "mapped not_found");
});

Deno.test("runCommand: the idempotency record (recordFor) is written in the events' commit, and only over its marker", async () => {
  await using g = await given(paidWithKey);
  const scope = await marker(g.kv, ["idem", "a"]);
  const { events } = await runCommand(banHandler({ loads: 0, nows: [] }), {
    keyId: "key1",
    reason: "r",
  }, {
    store: g.store,
    clock: fixedClock(T),
    idempotency: { scope, status: 201 },
  });
  assertEquals(events.length, 1);
  assertEquals(scope.stored, true);
  assertEquals((await g.kv.get(["idem", "a"])).value, {
    state: "done",
    bodyHash: "h1",
    status: 201,
    expiresAt: T + 1,
    body: { banned: "key1" },
  });

  // A marker taken over by a retry: the whole commit fails, the ban's events too.
  await using h = await given(paidWithKey);
  const lost = await marker(h.kv, ["idem", "b"]);
  await h.kv.set(["idem", "b"], { state: "in-flight", owner: "retry" });
  const before = await h.store.head();
  await assertRejects(
    () =>
      runCommand(banHandler({ loads: 0, nows: [] }), { keyId: "key1", reason: "r" }, {
        store: h.store,
        clock: fixedClock(T),
        idempotency: { scope: lost, status: 201 },
      }),
    GuardChangedError,
  );
  assertEquals(await h.store.head(), before);
  assertEquals(
    (await read(kvReads(h.kv), keysProjection, ["key1"]))?.banned,
    null,
  );
  assertEquals(lost.stored, false);
});

Deno.test("runCommand: a decision of no events commits nothing, the record left to the middleware", async () => {
  await using g = await given([...paidWithKey, {
    type: "KeyBanned",
    v: 1,
    data: { keyId: "key1", reason: "earlier" },
  }]);
  const before = await g.store.head();
  const scope = await marker(g.kv, ["idem", "c"]);
  const { result, events } = await runCommand(
    banHandler({ loads: 0, nows: [] }),
    { keyId: "key1", reason: "again" },
    { store: g.store, clock: fixedClock(T), idempotency: { scope, status: 200 } },
  );
  assertEquals([result, events], [{ banned: "already" }, []]);
  assertEquals(await g.store.head(), before);
  assertEquals(scope.stored, false);
  assertEquals((await g.kv.get(["idem", "c"])).value, { state: "in-flight" });
});

Deno.test("runCommand: an append by another writer between load and commit re-runs load and decide on the new state", async () => {
  await using g = await given(paidWithKey);
  const other = new EventStore(g.kv, { projections: allProjections, now: () => T });
  const seen = { loads: 0, nows: [] as number[] };
  const inner = banHandler(seen);
  const racing: typeof inner = {
    ...inner,
    async load(tx, cmd) {
      const state = await inner.load(tx, cmd);
      // Another process bans the key after this attempt read it.
      if (seen.loads === 1) {
        await other.append([{
          stream: "purchase-pur1",
          expectedVersion: "any",
          events: [{ type: "KeyBanned", v: 1, data: { keyId: "key1", reason: "other" } }],
        }]);
      }
      return state;
    },
  };
  const { result, events } = await runCommand(racing, { keyId: "key1", reason: "mine" }, {
    store: g.store,
    clock: fixedClock(T),
  });
  assertEquals(seen.loads, 2);
  assertEquals([result, events.length], [{ banned: "already" }, 0]);
});

Deno.test("runCommand: access through the runner (the pilot feature): a second key refused, a rotation appended", async () => {
  await using g = await given(paidWithKey);
  const ctx = { store: g.store, clock: fixedClock(T) };
  const err = await assertRejects(
    () =>
      runCommand(accessCommands, {
        type: "IssueKey",
        purchaseId: "pur1",
        wallet: "Wallet111",
        keyId: "key2",
        secretMac: "m",
      }, ctx),
    ApiError,
  ) as ApiError;
  assertEquals(err.code, "invalid_request");
  const { events } = await runCommand(accessCommands, {
    type: "RotateKey",
    keyId: "key1",
    wallet: "Wallet111",
    secretMac: "m2",
  }, ctx);
  assertEquals(events.map((e) => [e.type, e.stream, e.streamPosition]), [[
    "KeyRotated",
    "purchase-pur1",
    4,
  ]]);
  assert(events[0].type === "KeyRotated" && events[0].data.secretMac === "m2");
});

Deno.test("runCommand: events elsewhere, reactions and queue messages all land in the one commit; none when nothing is decided", async () => {
  await using g = await given(paidWithKey);
  const reactedOn: string[][] = [];
  const handler: CommandHandler<
    { act: boolean },
    KeyDoc | null,
    EventOf<"KeyBanned" | "KeySuspended">,
    Rejection,
    null
  > = {
    load: (tx) => read(tx, keysProjection, ["key1"]),
    decide: (cmd) =>
      cmd.act
        ? [
          { type: "KeyBanned", v: 1, data: { keyId: "key1", reason: "main" } },
          { type: "KeySuspended", v: 1, data: { keyId: "key1", reason: "other stream" } },
        ]
        : [],
    stream: () => "main-1",
    elsewhere: (e, key) => e.type === "KeySuspended" ? `purchase-${key!.purchaseId}` : null,
    async react(tx, events) {
      reactedOn.push(events.map((e) => e.type));
      // Reads under the same head as load: the key as it was before this commit.
      const key = await read(tx, keysProjection, ["key1"]);
      return {
        append: [{
          stream: "reaction-1",
          expectedVersion: "any",
          events: [{ type: "KeyBanLifted", v: 1, data: { keyId: key!.keyId } }],
        }],
        enqueue: [{ value: { from: "react" } }],
      };
    },
    enqueue: () => [{ value: { from: "handler" } }],
    respond: () => null,
  };
  const received: unknown[] = [];
  const twoMessages = new Promise<void>((resolve) => {
    g.kv.listenQueue((m) => {
      received.push(m);
      if (received.length === 2) resolve();
    });
  });
  const ctx = { store: g.store, clock: fixedClock(T) };

  const nothing = await runCommand(handler, { act: false }, ctx);
  assertEquals([nothing.events, reactedOn], [[], []]);

  const before = await g.store.head();
  const { events } = await runCommand(handler, { act: true }, ctx);
  assertEquals(events.map((e) => [e.type, e.stream, e.position - before.position]), [
    ["KeyBanned", "main-1", 1],
    ["KeySuspended", "purchase-pur1", 2],
    ["KeyBanLifted", "reaction-1", 3],
  ]);
  assertEquals(reactedOn, [["KeyBanned"]]);
  assertEquals(new Set(events.map((e) => e.at)).size, 1);
  await twoMessages;
  assertEquals(received.map((m) => (m as { from: string }).from).sort(), ["handler", "react"]);
});
