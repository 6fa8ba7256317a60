/**
 * Upcasting: an AccessPaymentQuoted written as v1 (before quotes carried their expiry) is read by
 * the folds as v2, while the log keeps the v1 bytes and the hash chain still verifies.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { EventStore } from "../../events/store.ts";
import { projectionKey } from "../../events/keys.ts";
import { readEvents } from "../../events/log.ts";
import type { DomainEvent, StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import type { PurchaseDoc } from "../../projections/purchases.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { verifyChain } from "../../src/audit/log-chain.ts";
import { upcast, V1_QUOTE_TTL_MS } from "../../projections/upcast.ts";
import { SAMPLES, stored } from "./support/events.ts";

const { expiresAt: _dropped, ...v1Data } = SAMPLES.AccessPaymentQuoted.data;
const quoteV1: DomainEvent = { type: "AccessPaymentQuoted", v: 1, data: v1Data };

Deno.test("upcast: given a v1 quote, when read, then v2 with the expiry v1 implied; the input is not changed", () => {
  const e = stored(quoteV1);
  const before = structuredClone(e);
  const current = upcast(e);
  assertEquals(current.v, 2);
  assert(current.type === "AccessPaymentQuoted");
  assertEquals(current.data.expiresAt, e.at + V1_QUOTE_TTL_MS);
  // Everything else, the hash and chain fields included, is as stored.
  assertEquals({ ...current, v: 1, data: v1Data }, before);
  assertEquals(e, before);
});

Deno.test("upcast: an event already current is handed back as is", () => {
  const e = stored(SAMPLES.AccessPaymentQuoted);
  assert(upcast(e) === e);
  const k = stored(SAMPLES.KeyIssued);
  assert(upcast(k) === k);
});

Deno.test("upcast: a v1 quote appended to the log folds as v2; the log keeps v1 and the chain verifies", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const now = 1_700_000_000_000;
    const store = new EventStore(kv, { projections: allProjections, now: () => now });
    await store.append([{ stream: "purchase-pur1", expectedVersion: 0, events: [quoteV1] }]);

    const purchase = (await kv.get<PurchaseDoc>(projectionKey("purchase", ["pur1"]))).value;
    assertEquals(purchase?.expiresAt, now + V1_QUOTE_TTL_MS);
    assertEquals(purchase?.quote.expiresAt, now + V1_QUOTE_TTL_MS);

    const log: StoredEvent[] = [];
    for await (const e of readEvents(kv)) log.push(e);
    assertEquals(log.length, 1);
    assertEquals(log[0].v, 1);
    assert(log[0].type === "AccessPaymentQuoted" && !("expiresAt" in log[0].data));

    assert((await verifyChain(kv)).ok);
    // Replay from the log alone reads the same v1 event through the same upcast.
    assert((await replayAndCompare(kv, allProjections)).equal);
  } finally {
    kv.close();
  }
});
