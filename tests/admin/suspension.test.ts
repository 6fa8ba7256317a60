import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import type { DomainEvent } from "../../events/types.ts";
import { projectionKey } from "../../events/keys.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { decideSuspension, keyStream } from "../../src/admin/suspension.ts";

const key = (over: Partial<KeyDoc> = {}): KeyDoc => ({
  keyId: "k1",
  purchaseId: "p1",
  wallet: "W",
  secretMac: "mac",
  createdAt: 0,
  rotatedAt: null,
  deleted: false,
  banned: null,
  suspended: null,
  unverifiedCount: 0,
  ...over,
});

Deno.test("decideSuspension: only the landing that goes past the threshold suspends", () => {
  // Threshold 3: the 1st..3rd fee-less landings are tolerated, the 4th suspends.
  for (const count of [0, 1, 2]) {
    assertEquals(decideSuspension(key({ unverifiedCount: count }), 3), []);
  }
  assertEquals(decideSuspension(key({ unverifiedCount: 3 }), 3), [{
    type: "KeySuspended",
    v: 1,
    data: {
      keyId: "k1",
      reason: "4 creations landed unverified (the fee, the supply or the mint was wrong)",
    },
  }]);
  // A sweep over settled state counts nothing pending.
  assertEquals(decideSuspension(key({ unverifiedCount: 3 }), 3, { pending: 0 }), []);
  assertEquals(decideSuspension(key({ unverifiedCount: 4 }), 3, { pending: 0 }).length, 1);
  // Threshold 0: the first fee-less landing suspends.
  assertEquals(decideSuspension(key(), 0).length, 1);
});

Deno.test("decideSuspension: an already suspended or banned key gets no second event", () => {
  assertEquals(decideSuspension(key({ unverifiedCount: 9, suspended: "earlier" }), 3), []);
  assertEquals(decideSuspension(key({ unverifiedCount: 9, banned: "scam" }), 3), []);
  // Lifting clears the suspension but not the count: the next landing suspends again.
  assertEquals(decideSuspension(key({ unverifiedCount: 5 }), 3).length, 1);
  assertEquals(keyStream(key()), "purchase-p1");
});

const unverified = (buildId: number, keyId: string): DomainEvent => ({
  type: "CreationUnverified",
  v: 1,
  data: {
    buildId,
    keyId,
    mint: `Mint${buildId}`,
    signature: `Sig${buildId}`,
    slot: 1,
    blockTime: null,
    feeLamportsSeen: "0",
    supplyRawSeen: "1",
    problems: ["no fee transfer to the treasury"],
  },
});

Deno.test("through the store: fee-less landings past the threshold suspend the key (401) until an operator lifts it", async () => {
  const adminToken = "admin-token-0123456789-0123456789-abcdef";
  const h = await startHarness({ env: { SUSPEND_AFTER_UNVERIFIED: "2", ADMIN_TOKEN: adminToken } });
  try {
    const { apiKey, keyId } = await h.newApiKey();
    const threshold = h.services.config.suspendAfterUnverified;
    assertEquals(threshold, 2);
    // What the verification code does: read the key, decide, append the landing and the verdict
    // in one commit.
    const land = (buildId: number) =>
      h.services.store.transact(async (tx) => {
        const k = (await tx.projection(keysProjection, [keyId]))!;
        return {
          append: [
            {
              stream: `build-${buildId}`,
              expectedVersion: "any",
              events: [unverified(buildId, keyId)],
            },
            {
              stream: keyStream(k),
              expectedVersion: "any",
              events: decideSuspension(k, threshold),
            },
          ],
          result: null,
        };
      });
    const me = () => h.request("/v1/me", { headers: bearer(apiKey) });

    await land(1);
    await land(2);
    assertEquals((await me()).status, 200);
    await land(3);
    const refused = await me();
    assertEquals(refused.status, 401);
    assertEquals((await refused.json()).error.code, "unauthorized");
    const doc = (await h.kv.get<KeyDoc>(projectionKey("key", [keyId]))).value!;
    assertEquals(doc.unverifiedCount, 3);
    assertEquals(
      doc.suspended,
      "3 creations landed unverified (the fee, the supply or the mint was wrong)",
    );

    // A fourth landing while suspended adds no second KeySuspended.
    const { events } = await land(4);
    assertEquals(events.map((e) => e.type), ["CreationUnverified"]);

    const admin = { authorization: `Bearer ${adminToken}` };
    const listed = await (await h.request("/admin/keys?status=suspended", { headers: admin }))
      .json();
    assertEquals(listed.items.map((k: { keyId: string }) => k.keyId), [keyId]);
    const lift = await h.request(`/admin/keys/${keyId}/lift`, { method: "POST", headers: admin });
    assertEquals(lift.status, 200);
    assertEquals((await lift.json()).key.status, "active");
    assertEquals((await me()).status, 200);

    // The count stays: the next fee-less landing suspends again at once.
    await land(5);
    assertEquals((await me()).status, 401);
    assert(h.logs.some((l) => l.includes('"admin: ban lifted"')));
  } finally {
    await h.close();
  }
});
