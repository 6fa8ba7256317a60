/**
 * Deleting a key must not reset the count of creations its own wallet landed without the fee:
 * through the real portal (delete, create again on the same purchase) and the real lifecycle
 * command.
 */
import { assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { recordLifecycle } from "../../src/creation/handle.ts";
import { built } from "../audit/fixtures.ts";
import type { DomainEvent } from "../../events/types.ts";

/** A build of the purchase paid by its own wallet. */
const ownBuild = (buildId: number, keyId: string, purchaseId: string, wallet: string) => {
  const e = built(buildId, keyId, purchaseId, "2026-11-23") as DomainEvent & {
    data: { payer: string; recipient: string };
  };
  e.data.payer = e.data.recipient = wallet;
  return e;
};

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

Deno.test("own-wallet fee-less landings past the threshold suspend the purchase's new key after the old one was deleted", async () => {
  const h = await startHarness({ env: { SUSPEND_AFTER_UNVERIFIED: "1" } });
  try {
    const first = await h.newApiKey();
    await h.services.store.append([
      {
        stream: "build-1",
        expectedVersion: 0,
        events: [ownBuild(1, first.keyId, first.purchaseId, first.wallet.publicKey.toBase58())],
      },
      {
        stream: "build-2",
        expectedVersion: 0,
        events: [ownBuild(2, first.keyId, first.purchaseId, first.wallet.publicKey.toBase58())],
      },
    ]);
    await recordLifecycle(h.services, 1, feeless("Sig1"));

    const deleted = await h.portal(first.cookie, `/portal/api/keys/${first.keyId}/delete`, {});
    assertEquals(deleted.status, 200, await deleted.text());
    const again = await h.portal(first.cookie, `/portal/api/purchases/${first.purchaseId}/key`, {});
    assertEquals(again.status, 201);
    const second = await again.json() as { apiKey: string; keyId: string };
    assertEquals((await h.request("/v1/me", { headers: bearer(second.apiKey) })).status, 200);

    // The second fee-less landing is a build of the deleted key (seen by the watcher, so it is
    // also its submission); the count is the purchase's.
    const { events } = await recordLifecycle(h.services, 2, feeless("Sig2"));
    assertEquals(events.map((e) => e.type), [
      "TransactionSubmitted",
      "CreationUnverified",
      "KeySuspended",
    ]);
    const doc = (await h.kv.get<KeyDoc>(projectionKey("key", [second.keyId]))).value!;
    assertEquals(doc.suspended !== null, true);
    assertEquals((await h.request("/v1/me", { headers: bearer(second.apiKey) })).status, 401);
  } finally {
    await h.close();
  }
});
