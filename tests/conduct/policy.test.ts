/**
 * Suspension falls on a key for its own conduct only: its own wallet's fee-less landings, or a
 * share of recent landings from many payers. Pure rules first, then through the store and the
 * real lifecycle command, then the operator's lift.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import type { DomainEvent } from "../../events/types.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { EMPTY_CONDUCT, type PurchaseConductDoc } from "../../projections/conduct.ts";
import { decideSuspension, payerRefusal } from "../../src/conduct/policy.ts";
import { keyStream } from "../../src/admin/decide.ts";
import type { ConductPolicy } from "../../src/config.ts";
import { recordLifecycle } from "../../src/creation/handle.ts";
import { built } from "../audit/fixtures.ts";

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

const policy: ConductPolicy = {
  refusePayerAfter: 1,
  keyWalletTolerated: 3,
  share: 0.5,
  minPayers: 10,
};
const own = (n: number): PurchaseConductDoc => ({ ...EMPTY_CONDUCT, byKeyWallet: n });

Deno.test("decideSuspension: the own-wallet landing past the threshold suspends, once", () => {
  for (const n of [0, 1, 2, 3]) assertEquals(decideSuspension(key(), own(n), policy), []);
  assertEquals(decideSuspension(key(), own(4), policy), [{
    type: "KeySuspended",
    v: 1,
    data: {
      keyId: "k1",
      reason:
        "4 creations paid by the key's own wallet landed unverified (the fee, the supply or the mint was wrong)",
    },
  }]);
  assertEquals(decideSuspension(key({ suspended: "earlier" }), own(9), policy), []);
  assertEquals(decideSuspension(key({ banned: "scam" }), own(9), policy), []);
  // Lifting clears the suspension but not the count: the next landing suspends again.
  assertEquals(decideSuspension(key(), own(5), policy).length, 1);
  assertEquals(keyStream(key()), "purchase-p1");
});

Deno.test("payerRefusal: the configured number of fee-less landings refuses the wallet", () => {
  const last = { mint: "MintA", signature: "SigA", keyId: "k9", at: 0 };
  assertEquals(payerRefusal(null, policy), null);
  assert(payerRefusal({ unverified: 1, last }, policy)?.includes("mint MintA"));
  assertEquals(payerRefusal({ unverified: 1, last }, { ...policy, refusePayerAfter: 2 }), null);
});

const feeless = (signature: string) => ({
  type: "RecordLanding" as const,
  signature,
  slot: 5,
  blockTime: null,
  assessment: {
    status: "unverified" as const,
    feeLamportsSeen: 0n,
    supplyRawSeen: 1000n,
    problems: ["no fee to the treasury"],
  },
});

Deno.test("through the store: the key's own wallet's fee-less landings past the threshold suspend it (401) until an operator lifts it", async () => {
  const adminToken = "admin-token-0123456789-0123456789-abcdef";
  const h = await startHarness({ env: { SUSPEND_AFTER_UNVERIFIED: "2", ADMIN_TOKEN: adminToken } });
  try {
    const { apiKey, keyId, purchaseId, wallet } = await h.newApiKey();
    assertEquals(h.services.config.conduct.keyWalletTolerated, 2);
    // Builds paid by the wallet that bought the key: its own conduct.
    const land = async (buildId: number) => {
      const e = built(buildId, keyId, purchaseId, "2026-11-23") as DomainEvent & {
        data: { payer: string; recipient: string };
      };
      e.data.payer = e.data.recipient = wallet.publicKey.toBase58();
      await h.services.store.append([
        { stream: `build-${buildId}`, expectedVersion: 0, events: [e] },
      ]);
      return await recordLifecycle(h.services, buildId, feeless(`Sig${buildId}`));
    };
    const me = () => h.request("/v1/me", { headers: bearer(apiKey) });

    await land(1);
    await land(2);
    const before = await (await me()).json();
    assertEquals(before.conduct.byKeyWallet, 2);
    assertEquals(
      before.conduct.unverifiedLandings.map((l: { byKeyWallet: boolean }) => l.byKeyWallet),
      [true, true],
    );
    await land(3);
    const refused = await me();
    assertEquals(refused.status, 401);
    assertEquals((await refused.json()).error.code, "unauthorized");
    const doc = (await h.kv.get<KeyDoc>(projectionKey("key", [keyId]))).value!;
    assertEquals(doc.unverifiedCount, 3);
    assertEquals(
      doc.suspended,
      "3 creations paid by the key's own wallet landed unverified (the fee, the supply or the mint was wrong)",
    );

    // A fourth landing while suspended adds no second KeySuspended.
    const { events } = await land(4);
    assertEquals(events.map((e) => e.type), ["TransactionSubmitted", "CreationUnverified"]);

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
