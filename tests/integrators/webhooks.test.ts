/**
 * Webhooks on the embedded chain: a build's outcome reaches a receiver that verifies it with the
 * `standardwebhooks` package, through the Deno KV queue, even when the receiver is down for the
 * first attempts; every attempt is an event and in the delivery log; a delivery can be replayed;
 * the retry schedule and the 3-day disable rule run on a fake clock.
 */
import { Webhook } from "standardwebhooks";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import type { Config } from "../../src/config.ts";
import { deliverWebhook } from "../../src/webhooks/deliver.ts";
import { DISABLE_AFTER_MS, RETRY_DELAYS_MS } from "../../src/webhooks/decide.ts";
import type { DeliveryMessage, DeliveryScheduler } from "../../src/services.ts";
import { kvDeliveryScheduler } from "../../src/webhooks/scheduler.ts";
import {
  WebhookDeliveryList,
  WebhookEndpointCreated,
  WebhookEndpointList,
} from "../../src/openapi/integrator.ts";
import { allEvents } from "../reliability/support.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";

function assertThrows(f: () => unknown) {
  let threw = false;
  try {
    f();
  } catch {
    threw = true;
  }
  assert(threw, "expected a throw");
}
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { startReceiver } from "./receiver.ts";
import { build, land } from "./support.ts";

const loopback = { webhooks: { allowLoopback: true } } as Partial<Config>;

async function register(h: Harness, apiKey: string, url: string, extra: object = {}) {
  const res = await h.request("/v1/webhooks", {
    method: "POST",
    headers: bearer(apiKey),
    json: { url, ...extra },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return WebhookEndpointCreated.strict().parse(body);
}

async function deliveries(h: Harness, apiKey: string, id: string, query = "") {
  const res = await h.request(`/v1/webhooks/${id}/deliveries${query}`, {
    headers: bearer(apiKey),
  });
  const body = await res.json();
  assertEquals(res.status, 200, JSON.stringify(body));
  return WebhookDeliveryList.strict().parse(body);
}

Deno.test("a confirmed build reaches a verifying receiver through the KV queue although it is down for the first two attempts; a tampered copy is rejected; replay sends the same message again", async () => {
  const receiver = startReceiver();
  const h = await startHarness({ config: loopback, watch: true });
  // The real KV queue, with the backoff pauses cut to a few milliseconds.
  h.services.webhookScheduler = {
    schedule: (msg, delay) => kvDeliveryScheduler.schedule(msg, Math.min(delay, 5)),
  };
  try {
    const { apiKey } = await h.newApiKey();
    const ep = await register(h, apiKey, receiver.url, { description: "orders" });
    assertMatch(ep.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    // No events asked: every outcome, a token update's included.
    assertEquals(ep.events, [
      "token.confirmed",
      "token.unverified",
      "token.failed",
      "token.expired",
      "token.refreshed",
      "token.updated",
      "token.update_failed",
    ]);
    receiver.setSecret(ep.secret);
    receiver.downFor(2);

    const payer = h.fundedWallet(20);
    const built = await build(h, apiKey, payer, "Hooked");
    const { signature } = await land(h, apiKey, payer, built);
    await receiver.waitFor(1);
    assertEquals(receiver.hits, 3);
    assertEquals(receiver.rejected, []);

    const got = receiver.verified[0];
    assertEquals(got.payload.type, "token.confirmed");
    assertMatch(got.payload.timestamp, /^\d{4}-\d\d-\d\dT/);
    const data = got.payload.data as Record<string, unknown>;
    assertEquals([data.buildId, data.mint, data.signature, data.status], [
      built.buildId,
      built.mint,
      signature,
      "confirmed",
    ]);
    const fee = data.fee as Record<string, unknown>;
    assertEquals(fee.verified, true);
    assertEquals(fee.lamportsSeen, fee.lamports);
    assertEquals(got.headers["webhook-id"], `msg_${built.buildId}_confirmed`);

    // A byte changed in the body, or a signature from another secret, does not verify.
    const wh = new Webhook(ep.secret);
    wh.verify(got.body, got.headers);
    assertThrows(() => wh.verify(got.body.replace("confirmed", "confirmex"), got.headers));
    const other = new Webhook(`whsec_${btoa("x".repeat(32))}`);
    assertThrows(() => other.verify(got.body, got.headers));

    const log = await settled(h, apiKey, ep.id, 1);
    const d = log.items[0];
    assertEquals([d.type, d.status, d.messageId], [
      "token.confirmed",
      "delivered",
      got.headers["webhook-id"],
    ]);
    assertEquals(d.attempts.map((a) => [a.ok, a.httpStatus]), [[false, 503], [false, 503], [
      true,
      204,
    ]]);
    assertEquals(d.attempts[0].error, "answered HTTP 503");

    const replay = await h.request(`/v1/webhooks/${ep.id}/deliveries/${d.id}/replay`, {
      method: "POST",
      headers: bearer(apiKey),
    });
    assertEquals(replay.status, 202);
    const replayed = await replay.json();
    assertEquals([replayed.replayOf, replayed.messageId], [d.id, d.messageId]);
    await receiver.waitFor(2);
    assertEquals(receiver.verified[1].body, got.body);
    assertEquals(receiver.verified[1].headers["webhook-id"], got.headers["webhook-id"]);
    const after = await settled(h, apiKey, ep.id, 2);
    assertEquals(after.items.map((i) => i.replayOf), [d.id, null]);

    // Every attempt and outcome is an event; projections rebuild from the log alone.
    const types = (await allEvents(h.kv)).map((e) => e.type).filter((t) => t.startsWith("Webhook"));
    assertEquals(types, [
      "WebhookEndpointRegistered",
      "WebhookDeliveryScheduled",
      "WebhookDeliveryAttempted",
      "WebhookDeliveryAttempted",
      "WebhookDeliveryAttempted",
      "WebhookDeliveryScheduled",
      "WebhookDeliveryAttempted",
    ]);
    const report = await replayAndCompare(h.kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
  } finally {
    await h.close();
    await receiver.close();
  }
});

/** The receiver answers before the attempt is recorded: wait for the record. */
async function settled(h: Harness, apiKey: string, id: string, count: number) {
  for (let i = 0; i < 1_000; i++) {
    const log = await deliveries(h, apiKey, id);
    if (log.items.length === count && log.items.every((d) => d.status !== "pending")) return log;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("deliveries did not settle");
}

/** Captures what would go on the queue; the test runs it, moving the fake clock by each pause. */
function manualQueue(advance: (ms: number) => void) {
  const queued: { msg: DeliveryMessage; delay: number }[] = [];
  const scheduler: DeliveryScheduler = {
    schedule: (msg, delay) => {
      queued.push({ msg, delay });
      return [];
    },
  };
  return {
    scheduler,
    queued,
    /** Runs every queued attempt in order; returns the pauses taken. */
    async drain(h: Harness): Promise<number[]> {
      const pauses: number[] = [];
      while (queued.length) {
        const { msg, delay } = queued.shift()!;
        pauses.push(delay);
        advance(delay);
        await deliverWebhook(h.services, msg);
      }
      return pauses;
    },
  };
}

Deno.test("retries back off over more than 24 h (fake clock); an endpoint failing for 3 days is disabled with an event and gets nothing more", async () => {
  const receiver = startReceiver();
  receiver.downFor(Number.MAX_SAFE_INTEGER);
  let now = Date.UTC(2031, 2, 3, 9);
  const h = await startHarness({ config: loopback, clock: () => now });
  const q = manualQueue((ms) => (now += ms));
  h.services.webhookScheduler = q.scheduler;
  try {
    const { apiKey } = await h.newApiKey();
    const ep = await register(h, apiKey, receiver.url, { events: ["token.confirmed"] });
    const payer = h.fundedWallet(20);
    const started = now;

    await land(h, apiKey, payer, await build(h, apiKey, payer, "First"));
    const pauses = await q.drain(h);
    assertEquals(pauses, [0, ...RETRY_DELAYS_MS]);
    assert(now - started >= 24 * 3_600_000, "retries span at least 24 h");
    assertEquals(receiver.hits, 8);
    let log = await deliveries(h, apiKey, ep.id);
    assertEquals([log.items[0].status, log.items[0].attempts.length], ["failed", 8]);
    assertEquals(log.items[0].failureReason, "all 8 attempts failed");
    let endpoint = await (await h.request(`/v1/webhooks/${ep.id}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals(endpoint.status, "enabled");
    assertEquals(endpoint.failingSince, new Date(started).toISOString());

    // Still failing when 3 days have passed since the first failure: disabled.
    now = started + DISABLE_AFTER_MS + 60_000;
    await land(h, apiKey, payer, await build(h, apiKey, payer, "Second"));
    assertEquals(await q.drain(h), [0]);
    endpoint = await (await h.request(`/v1/webhooks/${ep.id}`, { headers: bearer(apiKey) })).json();
    assertEquals(endpoint.status, "disabled");
    const disabled = (await allEvents(h.kv)).filter((e) => e.type === "WebhookEndpointDisabled");
    assertEquals(disabled.length, 1);
    log = await deliveries(h, apiKey, ep.id);
    assertEquals(log.items[0].failureReason, "endpoint disabled after failing for 3 days");
    // The delivery log pages newest first.
    const page1 = await deliveries(h, apiKey, ep.id, "?limit=1");
    assertEquals(page1.items.map((i) => i.id), [log.items[0].id]);
    const page2 = await deliveries(h, apiKey, ep.id, `?limit=1&cursor=${page1.nextCursor}`);
    assertEquals([page2.items.map((i) => i.id), page2.nextCursor], [[log.items[1].id], null]);
    const badPage = await h.request(`/v1/webhooks/${ep.id}/deliveries?limit=0&cursor=x`, {
      headers: bearer(apiKey),
    });
    assertEquals(badPage.status, 400);
    assertEquals(Object.keys((await badPage.json()).error.fields).sort(), ["cursor", "limit"]);

    // A disabled endpoint is not scheduled, and its deliveries cannot be replayed.
    const hits = receiver.hits;
    await land(h, apiKey, payer, await build(h, apiKey, payer, "Third"));
    assertEquals(q.queued.length, 0);
    assertEquals((await deliveries(h, apiKey, ep.id)).items.length, 2);
    const replay = await h.request(`/v1/webhooks/${ep.id}/deliveries/${log.items[0].id}/replay`, {
      method: "POST",
      headers: bearer(apiKey),
    });
    assertEquals(replay.status, 400);
    assertEquals(Object.keys((await replay.json()).error.fields), ["endpoint"]);
    assertEquals(receiver.hits, hits);

    const report = await replayAndCompare(h.kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
  } finally {
    await h.close();
    await receiver.close();
  }
});

Deno.test("a message delivered twice by the queue makes one attempt; a success resets the failing clock", async () => {
  const receiver = startReceiver();
  let now = Date.UTC(2031, 2, 3, 9);
  const h = await startHarness({ config: loopback, clock: () => now });
  const q = manualQueue((ms) => (now += ms));
  h.services.webhookScheduler = q.scheduler;
  try {
    const { apiKey } = await h.newApiKey();
    const ep = await register(h, apiKey, receiver.url);
    receiver.setSecret(ep.secret);
    receiver.downFor(1);
    const payer = h.fundedWallet(20);
    await land(h, apiKey, payer, await build(h, apiKey, payer, "Twice"));
    const first = q.queued[0].msg;
    await deliverWebhook(h.services, first);
    await deliverWebhook(h.services, first); // redelivered by the queue: dropped
    assertEquals(receiver.hits, 1);
    let endpoint = await (await h.request(`/v1/webhooks/${ep.id}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals(endpoint.failingSince, new Date(now).toISOString());
    q.queued.shift();
    // The receiver's clock and ours agree here, so its timestamp check passes.
    now = Date.now();
    assertEquals(q.queued.map((x) => x.msg.attempt), [2]);
    await deliverWebhook(h.services, q.queued.shift()!.msg);
    assertEquals(receiver.verified.length, 1);
    endpoint = await (await h.request(`/v1/webhooks/${ep.id}`, { headers: bearer(apiKey) })).json();
    assertEquals(endpoint.failingSince, null);
  } finally {
    await h.close();
    await receiver.close();
  }
});

Deno.test("registering: https and public addresses only (loopback only when allowed), fields named, secret shown once, other keys see 404, delete", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const other = await h.newApiKey();
    for (
      const [json, field, why] of [
        [{ url: "http://example.com/hook" }, "url", /only https/],
        [{ url: "https://10.0.0.7/hook" }, "url", /not public \(private network/],
        [{ url: "https://169.254.169.254/latest" }, "url", /not public \(link-local/],
        [{ url: "https://[::1]/hook" }, "url", /not public \(loopback/],
        [{ url: "http://127.0.0.1:9/hook" }, "url", /only https/],
        [{ url: "https://localhost/hook" }, "url", /not public/],
        [{ url: "https://user:pw@example.com/hook" }, "url", /credentials/],
        [{ url: "https://example.com/hook", events: ["token.minted"] }, "events.0", /each one of/],
        [{ url: "https://example.com/hook", events: [] }, "events", /at least one/],
        [{ url: "https://example.com/hook", secret: "mine" }, "secret", /unknown field/],
      ] as const
    ) {
      const res = await h.request("/v1/webhooks", {
        method: "POST",
        headers: bearer(apiKey),
        json,
      });
      assertEquals(res.status, 400, JSON.stringify(json));
      const fields = (await res.json()).error.fields;
      assertMatch(String(fields[field]), why, JSON.stringify(fields));
    }
    const ep = await register(h, apiKey, "https://hooks.example.com/tokens", {
      events: ["token.failed", "token.expired"],
    });
    assertEquals(ep.status, "enabled");
    const list = WebhookEndpointList.strict().parse(
      await (await h.request("/v1/webhooks", { headers: bearer(apiKey) })).json(),
    );
    assertEquals(list.items.map((i) => i.id), [ep.id]);
    assert(!JSON.stringify(list).includes("whsec_"), "the secret is shown once only");
    assert(
      !JSON.stringify(await allEvents(h.kv)).includes(ep.secret.slice(6)),
      "the log holds the secret sealed",
    );
    assertEquals(
      (await h.request(`/v1/webhooks/${ep.id}`, { headers: bearer(other.apiKey) })).status,
      404,
    );
    assertEquals(
      (await h.request(`/v1/webhooks/${ep.id}`, {
        method: "DELETE",
        headers: bearer(other.apiKey),
      }))
        .status,
      404,
    );
    assertEquals(
      (await h.request(`/v1/webhooks/${ep.id}/deliveries`, { headers: bearer(other.apiKey) }))
        .status,
      404,
    );
    assertEquals(
      (await h.request(`/v1/webhooks/${ep.id}`, { method: "DELETE", headers: bearer(apiKey) }))
        .status,
      204,
    );
    assertEquals(
      (await (await h.request("/v1/webhooks", { headers: bearer(apiKey) })).json()).items,
      [],
    );
    assertEquals((await h.request("/v1/webhooks")).status, 401);
  } finally {
    await h.close();
  }
});

Deno.test("once its key is deleted, an endpoint gets nothing more: pending deliveries are given up, new outcomes schedule none", async () => {
  const receiver = startReceiver();
  receiver.downFor(Number.MAX_SAFE_INTEGER);
  const h = await startHarness({ config: loopback });
  const q = manualQueue(() => {});
  h.services.webhookScheduler = q.scheduler;
  try {
    const { apiKey, keyId, cookie } = await h.newApiKey();
    await register(h, apiKey, receiver.url);
    const payer = h.fundedWallet(20);
    await land(h, apiKey, payer, await build(h, apiKey, payer, "Before"));
    const first = q.queued.shift()!.msg;
    await deliverWebhook(h.services, first);
    assertEquals(receiver.hits, 1);
    const second = q.queued.shift()!.msg;
    const built = await build(h, apiKey, payer, "After");

    const del = await h.request(`/portal/api/keys/${keyId}/delete`, {
      method: "POST",
      headers: { cookie },
      json: {},
    });
    assertEquals(del.status, 200, await del.text());
    await deliverWebhook(h.services, second);
    assertEquals(receiver.hits, 1);
    const delivery = (await allEvents(h.kv)).filter((e) => e.type === "WebhookDeliveryAbandoned");
    assertEquals(delivery.map((e) => (e.data as { reason: string }).reason), ["API key deleted"]);

    // The build made before the deletion lands now: no delivery is scheduled for it.
    const tx = decodeTx(built.transaction);
    tx.sign([payer]);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    await sweepOpenBuilds(h.services);
    assertEquals(q.queued.length, 0);
    assertEquals(
      (await allEvents(h.kv)).filter((e) => e.type === "CreationConfirmed").length,
      2,
    );
  } finally {
    await h.close();
    await receiver.close();
  }
});
