/**
 * The portal lists a key's newest builds and refreshes one that expired, with the wallet's session
 * instead of the API key: the same refresh as POST /v1/tokens/{mint}/refresh (same mint, fresh
 * blockhash, not counted, token.refreshed scheduled), and only for the wallet that bought the key.
 */
import type { Config } from "../../src/config.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { TokenRefreshed } from "../../src/tokens/build-response.ts";
import { allEvents } from "../reliability/support.ts";
import { assertEquals, assertMatch, assertNotEquals } from "../support/assert.ts";
import { bearer, decodeTx, startHarness } from "../support/harness.ts";

Deno.test("portal: the buying wallet sees its key's builds and refreshes an expired one; the refreshed transaction lands; others get 404", async () => {
  const h = await startHarness({
    chain: { slotMs: "manual" },
    config: { webhooks: { allowLoopback: true } } as Partial<Config>,
  });
  try {
    const { apiKey, keyId, cookie, wallet } = await h.newApiKey();
    const builds = `/portal/api/keys/${keyId}/builds`;
    assertEquals((await (await h.portal(cookie, builds)).json()).items, []);
    await h.portal(cookie, `/portal/api/keys/${keyId}/webhooks`, {
      url: "http://127.0.0.1:9/hooks",
    });

    const res = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: {
        payer: wallet.publicKey.toBase58(),
        name: "Portal Slow",
        symbol: "PSLW",
        metadataUri: "https://example.com/m/portal-slow.json",
        supply: "5",
      },
    });
    const built = await res.json();
    assertEquals(res.status, 201, JSON.stringify(built));
    const height = await h.services.connection.getBlockHeight("confirmed");
    h.chain.advanceSlots(built.lastValidBlockHeight - height + 2);
    await sweepOpenBuilds(h.services);

    const listed = await (await h.portal(cookie, builds)).json();
    assertEquals(listed.items.map((b: Record<string, unknown>) => [b.mint, b.name, b.status]), [
      [built.mint, "Portal Slow", "expired"],
    ]);

    const refresh = `${builds}/${built.mint}/refresh`;
    const other = await h.signIn(h.fundedWallet());
    assertEquals((await h.portal(other, refresh, {})).status, 404);
    assertEquals((await h.request(refresh, { method: "POST", json: {} })).status, 401);
    const bad = await h.portal(cookie, `${builds}/not-a-mint/refresh`, {});
    assertEquals([bad.status, Object.keys((await bad.json()).error.fields)], [400, ["mint"]]);

    const r = await h.portal(cookie, refresh, {});
    const body = TokenRefreshed.parse(await r.json());
    assertEquals([r.status, body.mint, body.buildId, body.feeQuote, body.refreshes], [
      200,
      built.mint,
      built.buildId,
      "quoted",
      1,
    ]);
    assertNotEquals(body.recentBlockhash, built.recentBlockhash);
    assertEquals(body.fee, built.fee);
    assertEquals(
      (await (await h.portal(cookie, builds)).json()).items[0].status,
      "built",
      "open again",
    );
    // Not counted again; the portal's refresh sends token.refreshed as the API's does.
    const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
    assertEquals(me.usageToday.tokens, 1);
    const scheduled = (await allEvents(h.kv)).filter((e) => e.type === "WebhookDeliveryScheduled")
      .map((e) => (e.data as { eventType: string }).eventType);
    assertEquals(scheduled, ["token.expired", "token.refreshed"]);

    const tx = decodeTx(body.transaction);
    tx.sign([wallet]);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    await sweepOpenBuilds(h.services);
    const landed = (await (await h.portal(cookie, builds)).json()).items[0];
    assertEquals([landed.status, landed.signature], ["confirmed", sig]);
    const late = await h.portal(cookie, refresh, {});
    assertEquals(late.status, 400);
    assertMatch((await late.json()).error.fields.mint, /has landed \(confirmed\)/);
  } finally {
    await h.close();
  }
});
