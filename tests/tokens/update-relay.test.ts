/**
 * An update's transaction through the relay (POST /v1/transactions) on the embedded chain: the
 * exact issued message, signed by the update's authority, is sent once; its submission and its
 * follow-up job go in one commit, and the follow-up records the landing through the update's own
 * verification (the record landed, the token's `current`, `token.updated` scheduled) without the
 * caller asking. What a run of the follow-up costs in RPC calls, a lost send sent again, an
 * update whose blockhash passed unseen recorded as failed, one that landed with an error recorded
 * as failed with token.update_failed, and the refusals.
 */
import bs58 from "bs58";
import { type Keypair, VersionedTransaction } from "@solana/web3.js";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { countingFetch } from "../support/counting-fetch.ts";
import { createToken, hostDocument, update } from "../support/token-update-flow.ts";
import { startReceiver } from "../integrators/receiver.ts";
import { allEvents } from "../reliability/support.ts";
import { kvReads, read } from "../../src/commands/read.ts";
import { updatesProjection } from "../../projections/updates.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import {
  decideFollow,
  EXPIRY_MARGIN_BLOCKS,
  type FollowMessage,
  followUpdate,
  MAX_FOLLOWS,
} from "../../src/creation/update-follow.ts";
import type { UpdateDoc } from "../../projections/updates.ts";
import type { Config } from "../../src/config.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function relay(h: Harness, apiKey: string, transaction: string) {
  const res = await h.request("/v1/transactions", {
    method: "POST",
    headers: bearer(apiKey),
    json: { transaction },
  });
  return { status: res.status, body: await res.json() };
}

/** An update of the token's uri, signed by `signer`: its id, the signed tx and its signature. */
async function signedUpdate(h: Harness, apiKey: string, mint: string, wallet: Keypair) {
  const uri = await hostDocument(h, apiKey, "Relayed v2", "RLY2");
  const u = await update(h, apiKey, mint, {
    authority: wallet.publicKey.toBase58(),
    metadataUri: uri,
  });
  assertEquals(u.status, 201, JSON.stringify(u.body));
  const tx = decodeTx(u.body.transaction);
  tx.sign([wallet]);
  return {
    uri,
    built: u.body,
    transaction: b64(tx.serialize()),
    signature: bs58.encode(tx.signatures[0]),
  };
}

const record = (h: Harness, updateId: string) =>
  read(kvReads(h.kv), updatesProjection, [updateId]) as Promise<UpdateDoc>;

async function until(f: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 500; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("update relay: sent once, followed to landed without verify, current and token.updated", async () => {
  const receiver = startReceiver();
  const h = await startHarness({
    config: { webhooks: { allowLoopback: true } } as Partial<Config>,
    watch: true,
  });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const reg = await h.request("/v1/webhooks", {
      method: "POST",
      headers: bearer(apiKey),
      json: { url: receiver.url, events: ["token.updated"] },
    });
    const ep = await reg.json();
    assertEquals(reg.status, 201, JSON.stringify(ep));
    receiver.setSecret(ep.secret);
    const mint = await createToken(h, apiKey, wallet);
    const u = await signedUpdate(h, apiKey, mint, wallet);

    const first = await relay(h, apiKey, u.transaction);
    assertEquals([first.status, first.body], [202, {
      signature: u.signature,
      mint,
      status: "submitted",
      updateId: u.built.updateId,
    }]);
    // A repeat: the same answer, no second submission.
    const again = await relay(h, apiKey, u.transaction);
    assertEquals([again.status, again.body], [202, first.body]);
    const submitted = (await allEvents(h.kv)).filter((e) => e.type === "TokenUpdateSubmitted");
    assertEquals(submitted.length, 1);

    // Nobody verifies: the relay's follow-up records the landing.
    await until(async () => (await record(h, u.built.updateId)).status === "landed", "landed");
    const landed = await record(h, u.built.updateId);
    assertEquals(landed.signature, u.signature);
    const rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
    assertEquals([rec.current.uri, rec.current.name, rec.current.lastUpdateId], [
      u.uri,
      "Relayed v2",
      u.built.updateId,
    ]);
    const scheduled = (await allEvents(h.kv)).filter((e) =>
      e.type === "WebhookDeliveryScheduled" && e.data.eventType === "token.updated"
    );
    assertEquals(scheduled.length, 1);
    await receiver.waitFor(1);
    assertEquals(receiver.verified[0].payload.data.updateId, u.built.updateId);
    assertEquals(receiver.verified[0].headers["webhook-id"], `msg_upd_${u.built.updateId}_updated`);

    // After the outcome, the same transaction is still answered the same, and sends nothing.
    assertEquals((await relay(h, apiKey, u.transaction)).body, first.body);

    for (let i = 0; i < 200; i++) {
      const list = await (await h.request(`/v1/webhooks/${ep.id}/deliveries`, {
        headers: bearer(apiKey),
      })).json();
      if (list.items[0]?.status === "delivered") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const report = await replayAndCompare(h.kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
  } finally {
    await h.close();
    await receiver.close();
  }
});

Deno.test("update relay: refused when not the authority's signature, another key's, or expired", async () => {
  const h = await startHarness({ chain: { slotMs: "manual" } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const other = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    const u = await signedUpdate(h, apiKey, mint, wallet);

    // A forged signature: the message is the update's, the signature is not its authority's.
    const forged = VersionedTransaction.deserialize(
      Uint8Array.from(atob(u.transaction), (c) => c.charCodeAt(0)),
    );
    forged.signatures[0][0] ^= 1;
    const bad = await relay(h, apiKey, b64(forged.serialize()));
    assertEquals(bad.status, 400);
    assertMatch(bad.body.error.fields.transaction, /not signed by the update's authority/);

    // Another key's update reads as unknown.
    const foreign = await relay(h, other.apiKey, u.transaction);
    assertEquals(foreign.status, 400);
    assertMatch(foreign.body.error.fields.transaction, /unknown build/);

    // Past its blockhash: refused, naming what to do.
    const height = await h.services.connection.getBlockHeight("confirmed");
    h.chain.advanceSlots(u.built.lastValidBlockHeight - height + 2);
    const stale = await relay(h, apiKey, u.transaction);
    assertEquals(stale.status, 400);
    assertMatch(
      stale.body.error.fields.transaction,
      /expired.*POST \/v1\/tokens\/\{mint\}\/update/,
    );
    assertEquals((await record(h, u.built.updateId)).status, "built");
  } finally {
    await h.close();
  }
});

Deno.test("update follow-up cost: a lost send is re-sent (3 calls), a landing read once (2), then none", async () => {
  let losing = false;
  const rpc = countingFetch();
  const lossy: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (losing && body?.method === "sendTransaction") {
      const tx = VersionedTransaction.deserialize(
        Uint8Array.from(atob(body.params[0]), (c) => c.charCodeAt(0)),
      );
      return Response.json({ jsonrpc: "2.0", id: body.id, result: bs58.encode(tx.signatures[0]) });
    }
    return await rpc.fetchFn(input, init);
  };
  const h = await startHarness({ rpcFetch: lossy });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    const u = await signedUpdate(h, apiKey, mint, wallet);
    // The relay's own send is lost.
    losing = true;
    assertEquals((await relay(h, apiKey, u.transaction)).status, 202);
    assertEquals((await record(h, u.built.updateId)).status, "submitted");
    losing = false;
    const msg: FollowMessage = {
      kind: "update-follow",
      updateId: u.built.updateId,
      signature: u.signature,
      transaction: u.transaction,
      attempt: 1,
    };
    rpc.take();
    // Open and unseen: the status, the height, one re-broadcast; and it runs again.
    assertEquals(await followUpdate(h.services, msg), true);
    assertEquals(rpc.take(), { getSignatureStatuses: 1, getBlockHeight: 1, sendTransaction: 1 });
    await h.waitForConfirmation(u.signature);
    rpc.take();
    // Confirmed: the status and one read back, recorded; no next run.
    assertEquals(await followUpdate(h.services, { ...msg, attempt: 2 }), false);
    assertEquals(rpc.take(), { getSignatureStatuses: 1, getTransaction: 1 });
    assertEquals((await record(h, u.built.updateId)).status, "landed");
    // Recorded: a late run makes no call at all.
    assertEquals(await followUpdate(h.services, { ...msg, attempt: 3 }), false);
    assertEquals(rpc.take(), {});
  } finally {
    await h.close();
  }
});

Deno.test("update follow-up: a relayed update lost until its blockhash passed is recorded as failed", async () => {
  let losing = false;
  const lossy: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (losing && body?.method === "sendTransaction") {
      const tx = VersionedTransaction.deserialize(
        Uint8Array.from(atob(body.params[0]), (c) => c.charCodeAt(0)),
      );
      return Response.json({ jsonrpc: "2.0", id: body.id, result: bs58.encode(tx.signatures[0]) });
    }
    return await fetch(input, init);
  };
  const h = await startHarness({ chain: { slotMs: "manual" }, rpcFetch: lossy });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    const u = await signedUpdate(h, apiKey, mint, wallet);
    losing = true;
    assertEquals((await relay(h, apiKey, u.transaction)).status, 202);
    const msg: FollowMessage = {
      kind: "update-follow",
      updateId: u.built.updateId,
      signature: u.signature,
      transaction: u.transaction,
      attempt: 0,
    };
    const height = await h.services.connection.getBlockHeight("confirmed");
    // Just past its last valid height: not yet recorded (a lagging node may still show it).
    h.chain.advanceSlots(u.built.lastValidBlockHeight - height + 1);
    assertEquals(await followUpdate(h.services, msg), true);
    assertEquals((await record(h, u.built.updateId)).status, "submitted");
    h.chain.advanceSlots(EXPIRY_MARGIN_BLOCKS + 1);
    assertEquals(await followUpdate(h.services, { ...msg, attempt: 1 }), false);
    const failed = await record(h, u.built.updateId);
    assertEquals(failed.status, "failed");
    assertMatch(failed.reason!, /expired/);
    // A repeat of the relayed transaction is answered as before, and sends nothing.
    const late = await relay(h, apiKey, u.transaction);
    assertEquals([late.status, late.body.status], [202, "submitted"]);
  } finally {
    await h.close();
  }
});

Deno.test("decideFollow: stops when not the submitted record, reads when confirmed, expires past the margin", () => {
  const u = { status: "submitted", signature: "S", lastValidBlockHeight: 100 } as UpdateDoc;
  const m = { signature: "S", attempt: 0 };
  assertEquals(decideFollow(null, m, null, 1), "stop");
  assertEquals(decideFollow({ ...u, status: "landed" }, m, "confirmed", null), "stop");
  assertEquals(decideFollow({ ...u, signature: "T" }, m, null, 1), "stop");
  assertEquals(decideFollow(u, m, "confirmed", null), "read");
  assertEquals(decideFollow(u, m, "processed", null), "wait");
  assertEquals(decideFollow(u, m, null, 100), "resend");
  assertEquals(decideFollow(u, m, null, 101), "wait");
  assertEquals(decideFollow(u, m, null, 100 + EXPIRY_MARGIN_BLOCKS + 1), "expire");
  assertEquals(decideFollow(u, { ...m, attempt: MAX_FOLLOWS }, null, 1), "stop");
  // Confirmed is read back even on the last run.
  assertEquals(decideFollow(u, { ...m, attempt: MAX_FOLLOWS }, "confirmed", null), "read");
});

Deno.test("update follow-up: a relayed update that lands with an error is recorded failed, token.update_failed scheduled", async () => {
  let losing = false;
  const lossy: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (losing && body?.method === "sendTransaction") {
      const tx = VersionedTransaction.deserialize(
        Uint8Array.from(atob(body.params[0]), (c) => c.charCodeAt(0)),
      );
      return Response.json({ jsonrpc: "2.0", id: body.id, result: bs58.encode(tx.signatures[0]) });
    }
    return await fetch(input, init);
  };
  const h = await startHarness({ rpcFetch: lossy });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const reg = await h.request("/v1/webhooks", {
      method: "POST",
      headers: bearer(apiKey),
      json: { url: "https://example.com/hooks/update-failed", events: ["token.update_failed"] },
    });
    assertEquals(reg.status, 201);
    const mint = await createToken(h, apiKey, wallet);
    // Two updates from the same state: a new uri (relayed, its send lost) and immutability.
    const u = await signedUpdate(h, apiKey, mint, wallet);
    losing = true;
    assertEquals((await relay(h, apiKey, u.transaction)).status, 202);
    losing = false;
    const lock = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      isMutable: false,
    });
    assertEquals(lock.status, 201, JSON.stringify(lock.body));
    const lockTx = decodeTx(lock.body.transaction);
    lockTx.sign([wallet]);
    await h.waitForConfirmation(await h.services.connection.sendRawTransaction(lockTx.serialize()));

    // The re-broadcast (no preflight) now lands and fails: the metadata is immutable.
    const msg: FollowMessage = {
      kind: "update-follow",
      updateId: u.built.updateId,
      signature: u.signature,
      transaction: u.transaction,
      attempt: 0,
    };
    assertEquals(await followUpdate(h.services, msg), true);
    await until(async () => {
      const { value: [st] } = await h.services.connection.getSignatureStatuses([u.signature]);
      return st?.confirmationStatus === "confirmed" || st?.confirmationStatus === "finalized";
    }, "the failing update to land");
    assertEquals(await followUpdate(h.services, { ...msg, attempt: 1 }), false);
    const failed = await record(h, u.built.updateId);
    assertEquals([failed.status, failed.signature], ["failed", u.signature]);
    assertMatch(failed.reason!, /landed with an error/);
    const scheduled = (await allEvents(h.kv)).filter((e) =>
      e.type === "WebhookDeliveryScheduled" && e.data.eventType === "token.update_failed"
    );
    assertEquals(scheduled.length, 1);
    // A failed update changes nothing of the token's current state (the lock was never verified).
    const rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
    assertEquals(rec.current ?? null, null, "nothing landed through the service yet");
  } finally {
    await h.close();
  }
});
