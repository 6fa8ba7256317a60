/**
 * The portal updates a confirmed build with the wallet's session instead of the API key: the
 * same update command as POST /v1/tokens/{mint}/update with the signed-in wallet as the
 * authority, the relay for the transaction the wallet signed, the update's record; and the list
 * of recent builds shows each token as it is now (its last landed update's name, symbol, uri).
 */
import bs58 from "bs58";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { type FollowMessage, followUpdate } from "../../src/creation/update-follow.ts";
import { TokenUpdateBuilt } from "../../src/tokens/update-response.ts";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { decodeTx, startHarness } from "../support/harness.ts";
import { createToken, hostDocument } from "../support/token-update-flow.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
type Item = Record<string, unknown>;

Deno.test("portal: a confirmed build is updated by the session's wallet, relayed, landed; the list shows the new uri", async () => {
  const h = await startHarness();
  try {
    const { apiKey, keyId, cookie, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    await sweepOpenBuilds(h.services);
    const builds = `/portal/api/keys/${keyId}/builds`;
    const list = async () => (await (await h.portal(cookie, builds)).json()).items as Item[];
    const view = (b: Item) => [b.mint, b.status, b.name, b.symbol, b.uri, b.updates];
    assertEquals((await list()).map(view), [
      [mint, "confirmed", "Life Token", "LIFE", "https://example.com/m/life.json", 0],
    ]);

    const path = `${builds}/${mint}/update`;
    const uri = await hostDocument(h, apiKey, "Portal v2", "PRT2");
    const other = await h.signIn(h.fundedWallet());
    assertEquals((await h.portal(other, path, { metadataUri: uri })).status, 404);
    assertEquals(
      (await h.request(path, { method: "POST", json: { metadataUri: uri } })).status,
      401,
    );
    const bad = await h.portal(cookie, path, { metadataUri: "not a uri", isMutable: true });
    assertEquals([bad.status, Object.keys((await bad.json()).error.fields).sort()], [400, [
      "isMutable",
      "metadataUri",
    ]]);
    const badMint = await h.portal(cookie, `${builds}/not-a-mint/update`, { metadataUri: uri });
    assertEquals([badMint.status, Object.keys((await badMint.json()).error.fields)], [400, [
      "mint",
    ]]);

    // The body can't name another authority: the session's wallet is the one.
    const stranger = h.fundedWallet().publicKey.toBase58();
    const res = await h.portal(cookie, path, { metadataUri: uri, authority: stranger });
    const built = TokenUpdateBuilt.parse(await res.json());
    assertEquals([res.status, built.requiredSigner, built.changes], [
      201,
      wallet.publicKey.toBase58(),
      ["metadataUri"],
    ]);
    assertEquals([built.after.uri, built.after.name, built.after.symbol], [
      uri,
      "Portal v2",
      "PRT2",
    ]);

    const tx = decodeTx(built.transaction);
    tx.sign([wallet]);
    const transaction = b64(tx.serialize());
    const relay = `/portal/api/keys/${keyId}/transactions`;
    assertEquals((await h.portal(other, relay, { transaction })).status, 404);
    assertEquals((await h.request(relay, { method: "POST", json: { transaction } })).status, 401);
    const sent = await h.portal(cookie, relay, { transaction });
    const body = await sent.json();
    const signature = bs58.encode(tx.signatures[0]);
    assertEquals([sent.status, body], [202, {
      signature,
      mint,
      status: "submitted",
      updateId: built.updateId,
    }]);

    const record = `${builds}/${mint}/updates/${built.updateId}`;
    assertEquals((await h.portal(other, record)).status, 404);
    assertEquals((await h.request(record)).status, 401);
    assertEquals((await (await h.portal(cookie, record)).json()).status, "submitted");
    // The relay's follow-up (a queue job in the service) records the landing.
    await h.waitForConfirmation(signature);
    const msg: FollowMessage = {
      kind: "update-follow",
      updateId: built.updateId,
      signature,
      transaction,
      attempt: 1,
    };
    assertEquals(await followUpdate(h.services, msg), false);
    assertEquals((await (await h.portal(cookie, record)).json()).status, "landed");
    assertEquals((await list()).map(view), [
      [mint, "confirmed", "Portal v2", "PRT2", uri, 1],
    ]);

    // The form's "make immutable" alone is an update too; a malformed update id is named.
    const lock = await h.portal(cookie, path, { isMutable: false });
    const locked = TokenUpdateBuilt.parse(await lock.json());
    assertEquals([lock.status, locked.changes, locked.after.isMutable], [
      201,
      ["isMutable"],
      false,
    ]);
    const badRecord = await h.portal(cookie, `${builds}/${mint}/updates/nope`);
    assertEquals([badRecord.status, Object.keys((await badRecord.json()).error.fields)], [400, [
      "updateId",
    ]]);
    assertMatch(JSON.stringify(locked.costs), /totalLamports/);
  } finally {
    await h.close();
  }
});
