/**
 * handleAdmin through the one runner on a real EventStore (in-memory KV, the registered
 * projections): the events land on the key's purchase stream, the key view shows them, a repeat
 * changes nothing, and an unknown key is a 404 that writes nothing.
 */
import { assertEquals, assertRejects } from "../support/assert.ts";
import { EventStore } from "../../events/store.ts";
import { allProjections } from "../../projections/index.ts";
import { fixedClock } from "../../src/kernel/clock.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import { handleAdmin } from "../../src/admin/handle.ts";
import { SAMPLES } from "../projections/support/events.ts";

const T = 1_800_000_000_000;

Deno.test("given an issued key, when banned twice and lifted, then one KeyBanned and one KeyBanLifted on its purchase stream", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new EventStore(kv, { projections: allProjections, now: () => T });
    await store.append([{
      stream: "purchase-pur1",
      expectedVersion: 0,
      events: [SAMPLES.AccessPaymentQuoted, SAMPLES.AccessPurchased, SAMPLES.KeyIssued],
    }]);
    const clock = fixedClock(T);
    const ban = { type: "BanKey" as const, keyId: "key1", reason: "abuse" };

    const first = await handleAdmin(store, ban, clock);
    assertEquals([first.changed, first.key.status, first.key.banned], [true, "banned", "abuse"]);
    assertEquals(first.events.map((e) => [e.type, e.stream]), [["KeyBanned", "purchase-pur1"]]);

    const again = await handleAdmin(store, ban, clock);
    assertEquals([again.changed, again.events.length, again.key.status], [false, 0, "banned"]);

    const lifted = await handleAdmin(store, { type: "LiftBan", keyId: "key1" }, clock);
    assertEquals([lifted.changed, lifted.key.status], [true, "active"]);
    assertEquals((await store.head()).position, 5);

    const e = await assertRejects(
      () => handleAdmin(store, { type: "BanKey", keyId: "nope", reason: "x" }, clock),
      ApiError,
    );
    assertEquals((e as ApiError).code, "not_found");
    assertEquals((await store.head()).position, 5, "a rejection writes nothing");
  } finally {
    kv.close();
  }
});
