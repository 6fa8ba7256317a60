/**
 * Webhooks for a slow signer, on the embedded chain with slots moved by hand: a build expires (the
 * watcher says so), is refreshed, expires and is refreshed again, and the last refreshed message
 * lands. The receiver gets, in order and each verified, token.expired, token.refreshed,
 * token.expired, token.refreshed, token.confirmed, every one under its own webhook-id; the stale
 * messages relayed afterwards fail harmlessly and schedule nothing. A first message still valid
 * when the refreshed one landed, sent straight to the chain, lands failed and changes nothing.
 */
import type { Keypair, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { allProjections } from "../../projections/index.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { rpcTxReader } from "../../src/audit/chain-check.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import type { Config } from "../../src/config.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import type { DeliveryMessage } from "../../src/services.ts";
import { deliverWebhook } from "../../src/webhooks/deliver.ts";
import { allEvents } from "../reliability/support.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { startReceiver } from "./receiver.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function post(h: Harness, apiKey: string, path: string, json?: unknown) {
  const res = await h.request(path, { method: "POST", headers: bearer(apiKey), json });
  return { status: res.status, body: await res.json() };
}

async function relay(h: Harness, apiKey: string, tx: VersionedTransaction, payer: Keypair) {
  tx.sign([payer]);
  return await post(h, apiKey, "/v1/transactions", { transaction: b64(tx.serialize()) });
}

/** Slots past the message's last valid block height, then the watcher's sweep. */
async function expire(h: Harness, lastValidBlockHeight: number) {
  const height = await h.services.connection.getBlockHeight("confirmed");
  h.chain.advanceSlots(Math.max(0, lastValidBlockHeight - height) + 2);
  await sweepOpenBuilds(h.services);
}

Deno.test("expired, refreshed, expired, refreshed, landed: the webhooks arrive in order, one per outcome, none for the stale messages", async () => {
  const receiver = startReceiver();
  const h = await startHarness({
    config: { webhooks: { allowLoopback: true } } as Partial<Config>,
    chain: { slotMs: "manual" },
  });
  // The queue's messages are kept and run by the test, in the order they were scheduled.
  const queued: DeliveryMessage[] = [];
  h.services.webhookScheduler = {
    schedule: (msg) => {
      queued.push(msg);
      return [];
    },
  };
  const drain = async () => {
    while (queued.length) await deliverWebhook(h.services, queued.shift()!);
  };
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const reg = await post(h, apiKey, "/v1/webhooks", { url: receiver.url });
    assertEquals(reg.status, 201, JSON.stringify(reg.body));
    assert(reg.body.events.includes("token.refreshed"), "a new endpoint gets every event type");
    receiver.setSecret(reg.body.secret);

    const built = await post(h, apiKey, "/v1/tokens", {
      payer: wallet.publicKey.toBase58(),
      name: "Slow Signer",
      symbol: "SLOW",
      metadataUri: "https://example.com/m/slow.json",
      supply: "1000",
    });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    const { mint, buildId } = built.body;

    await expire(h, built.body.lastValidBlockHeight);
    const r1 = await post(h, apiKey, `/v1/tokens/${mint}/refresh`);
    assertEquals(r1.status, 200, JSON.stringify(r1.body));
    await expire(h, r1.body.lastValidBlockHeight);
    const r2 = await post(h, apiKey, `/v1/tokens/${mint}/refresh`);
    assertEquals([r2.status, r2.body.refreshes], [200, 2], JSON.stringify(r2.body));

    const sent = await relay(h, apiKey, decodeTx(r2.body.transaction), wallet);
    assertEquals(sent.status, 202, JSON.stringify(sent.body));
    await h.waitForConfirmation(sent.body.signature);
    await sweepOpenBuilds(h.services);
    await drain();

    const got = receiver.verified;
    assertEquals(receiver.rejected, []);
    assertEquals(got.map((g) => g.payload.type), [
      "token.expired",
      "token.refreshed",
      "token.expired",
      "token.refreshed",
      "token.confirmed",
    ]);
    // Each outcome its own webhook-id: a receiver deduplicating on it drops none of them.
    assertEquals(got.map((g) => g.headers["webhook-id"]), [
      `msg_${buildId}_expired`,
      `msg_${buildId}_refreshed_1`,
      `msg_${buildId}_expired_1`,
      `msg_${buildId}_refreshed_2`,
      `msg_${buildId}_confirmed_2`,
    ]);
    const data = got.map((g) => g.payload.data);
    assertEquals(data.map((d) => [d.buildId, d.mint]), got.map(() => [buildId, mint]));
    assertEquals(data.map((d) => d.status), [
      "expired",
      "built",
      "expired",
      "built",
      "confirmed",
    ]);
    assertEquals(data.map((d) => d.refreshes), [0, 1, 1, 2, 2]);
    // A refresh says which message is now the build's, and how its fee was set.
    for (const [i, r] of [[1, r1], [3, r2]] as const) {
      assertEquals(data[i].refresh, {
        blockhash: r.body.recentBlockhash,
        lastValidBlockHeight: r.body.lastValidBlockHeight,
        feeQuote: "quoted",
      });
      assertEquals((data[i].fee as { lamports: string }).lamports, r.body.fee.lamports);
    }
    assertEquals(data[4].signature, sent.body.signature);
    assertEquals((data[4].fee as { verified: boolean }).verified, true);

    // The original and the first refreshed message: still the build's, so the relay takes them
    // to the cluster, which refuses both (blockhash gone, mint exists). Nothing more is recorded.
    for (const stale of [built.body.transaction, r1.body.transaction]) {
      const old = await relay(h, apiKey, decodeTx(stale), wallet);
      assertEquals([old.status, old.body.error?.code], [400, "simulation_failed"]);
    }
    await sweepOpenBuilds(h.services);
    assertEquals(queued.length, 0);
    const events = await allEvents(h.kv);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    assertEquals(
      [count("CreationConfirmed"), count("CreationFailed"), count("WebhookDeliveryScheduled")],
      [1, 0, 5],
    );
    const rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
    assertEquals([rec.status, rec.signature], ["confirmed", sent.body.signature]);
    const report = await replayAndCompare(h.kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
  } finally {
    await h.close();
    await receiver.close();
  }
});

Deno.test("an endpoint that did not subscribe to token.refreshed gets the outcomes only", async () => {
  const receiver = startReceiver();
  const h = await startHarness({
    config: { webhooks: { allowLoopback: true } } as Partial<Config>,
    chain: { slotMs: "manual" },
  });
  const queued: DeliveryMessage[] = [];
  h.services.webhookScheduler = {
    schedule: (msg) => {
      queued.push(msg);
      return [];
    },
  };
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const reg = await post(h, apiKey, "/v1/webhooks", {
      url: receiver.url,
      events: ["token.expired", "token.confirmed"],
    });
    receiver.setSecret(reg.body.secret);
    const built = await post(h, apiKey, "/v1/tokens", {
      payer: wallet.publicKey.toBase58(),
      name: "Outcomes Only",
      symbol: "OUT",
      metadataUri: "https://example.com/m/out.json",
      supply: "1",
    });
    await expire(h, built.body.lastValidBlockHeight);
    const r = await post(h, apiKey, `/v1/tokens/${built.body.mint}/refresh`);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    while (queued.length) await deliverWebhook(h.services, queued.shift()!);
    assertEquals(receiver.verified.map((g) => g.payload.type), ["token.expired"]);
  } finally {
    await h.close();
    await receiver.close();
  }
});

Deno.test("refreshed while the first message is still valid; the refreshed one lands; the first, sent straight to the chain after, lands failed: nothing more is sent, and the audit agrees", async () => {
  const h = await startHarness({
    config: { webhooks: { allowLoopback: true } } as Partial<Config>,
    chain: { slotMs: "manual" },
  });
  const scheduled: DeliveryMessage[] = [];
  h.services.webhookScheduler = {
    schedule: (msg) => {
      scheduled.push(msg);
      return [];
    },
  };
  try {
    const { apiKey, wallet } = await h.newApiKey();
    await post(h, apiKey, "/v1/webhooks", { url: "http://127.0.0.1:9/hooks" });
    const built = await post(h, apiKey, "/v1/tokens", {
      payer: wallet.publicKey.toBase58(),
      name: "Two Valid",
      symbol: "TWO",
      metadataUri: "https://example.com/m/two.json",
      supply: "7",
    });
    const { mint, buildId } = built.body;
    h.chain.advanceSlots(5);
    const r = await post(h, apiKey, `/v1/tokens/${mint}/refresh`);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    const sent = await relay(h, apiKey, decodeTx(r.body.transaction), wallet);
    assertEquals(sent.status, 202, JSON.stringify(sent.body));
    await h.waitForConfirmation(sent.body.signature);
    await sweepOpenBuilds(h.services);

    // The first message is still within its blockhash: the cluster takes it, and it fails there
    // (the mint account exists). The payer pays its network fee; nothing of the build changes.
    const stale = decodeTx(built.body.transaction);
    stale.sign([wallet]);
    const staleSig = bs58.encode(stale.signatures[0]);
    await h.services.connection.sendRawTransaction(stale.serialize(), { skipPreflight: true });
    const landedFailed = await h.waitForConfirmation(staleSig).then(() => false, () => true);
    assert(landedFailed, "the stale message failed on chain");
    // An error is reported once processed; a slot on, it is confirmed, as the watcher lists.
    h.chain.advanceSlots(2);
    const onChain = await h.services.connection.getTransaction(staleSig, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assert(onChain?.meta?.err, "it landed, with an error");
    await sweepOpenBuilds(h.services);

    const rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
    assertEquals([rec.status, rec.signature, rec.feeVerified], [
      "confirmed",
      sent.body.signature,
      true,
    ]);
    const events = await allEvents(h.kv);
    const ofBuild = events.filter((e) => (e.data as { buildId?: number }).buildId === buildId);
    assertEquals(
      ofBuild.filter((e) => e.type === "WebhookDeliveryScheduled")
        .map((e) => (e.data as { messageId: string }).messageId),
      [`msg_${buildId}_refreshed_1`, `msg_${buildId}_confirmed_1`],
    );
    assertEquals(ofBuild.filter((e) => e.type.startsWith("Creation")).map((e) => e.type), [
      "CreationConfirmed",
    ]);
    assertEquals(scheduled.length, 2);

    const scratch = await Deno.openKv(":memory:");
    try {
      const sink = new MemorySink();
      const summary = await runAudit({
        kv: h.kv,
        scratch,
        sink,
        readTx: rpcTxReader(h.services.connection),
      });
      assertEquals(sink.rows("exceptions"), []);
      assert(summary.ok, JSON.stringify(summary));
      const [row] = sink.rows("builds");
      assertEquals([row.mint, row.status, row.signature], [mint, "confirmed", sent.body.signature]);
    } finally {
      scratch.close();
    }
  } finally {
    await h.close();
  }
});
