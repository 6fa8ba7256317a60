/**
 * The queue job that makes one delivery attempt and records it. Idempotent: a message for an
 * attempt already recorded (KV delivers at least once) is dropped, and the record is written only
 * if no other run recorded that attempt first. A receiver's failure is an outcome, recorded and
 * retried on the schedule; only our own faults (KV) throw, for the queue to redeliver.
 */
import { projectionKey } from "../../events/keys.ts";
import type { DomainEvent } from "../../events/types.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from "../../projections/webhooks.ts";
import type { Services } from "../services.ts";
import { type AttemptResult, decideAttempt } from "./decide.ts";
import { type DeliveryMessage, deliveryMessage, kvDeliveryScheduler } from "./scheduler.ts";
import { openSecret } from "./secret.ts";
import { sendSigned } from "./send.ts";

export type Sender = typeof sendSigned;

export async function deliverWebhook(
  s: Services,
  msg: DeliveryMessage,
  send: Sender = sendSigned,
): Promise<void> {
  const delivery = await readDelivery(s.kv, msg.deliveryId);
  if (!delivery || delivery.status !== "pending" || delivery.attempts.length !== msg.attempt - 1) {
    return;
  }
  const endpoint = (await s.kv.get<WebhookEndpointDoc>(
    projectionKey("webhook", [delivery.endpointId]),
  )).value;
  const key = endpoint &&
    (await s.kv.get<KeyDoc>(projectionKey("key", [endpoint.keyId]))).value;
  if (!endpoint || endpoint.status !== "enabled" || !key || key.deleted) {
    await record(s, msg, () => [{
      type: "WebhookDeliveryAbandoned",
      v: 1,
      data: {
        deliveryId: delivery.deliveryId,
        endpointId: delivery.endpointId,
        reason: !endpoint
          ? "endpoint deleted"
          : endpoint.status !== "enabled"
          ? "endpoint disabled"
          : "API key deleted",
      },
    }]);
    return;
  }
  const secret = await openSecret(s.config.keyPepper!, endpoint.secretSealed);
  const now = s.clock();
  const result = await send(endpoint.url, secret, delivery.messageId, delivery.payload, now, {
    allowLoopback: s.config.webhooks.allowLoopback,
  });
  if (!result.ok) {
    s.logger.log("warn", "webhook attempt failed", {
      deliveryId: delivery.deliveryId,
      endpointId: endpoint.endpointId,
      attempt: msg.attempt,
      error: result.error,
    });
  }
  await recordAttempt(s, msg, result);
}

async function recordAttempt(s: Services, msg: DeliveryMessage, result: AttemptResult) {
  const scheduler = s.webhookScheduler ?? kvDeliveryScheduler;
  let retryInMs: number | null = null;
  await record(s, msg, (delivery, endpoint) => {
    if (!endpoint) return [];
    const decided = decideAttempt(delivery, endpoint, result, s.clock());
    retryInMs = decided.retryInMs;
    return decided.events;
  }, () =>
    retryInMs === null ? [] : scheduler.schedule(
      deliveryMessage(msg.deliveryId, msg.attempt + 1),
      retryInMs,
    ));
}

/** Appends what `decide` says, only while the delivery still awaits this message's attempt. */
async function record(
  s: Services,
  msg: DeliveryMessage,
  decide: (d: WebhookDeliveryDoc, e: WebhookEndpointDoc | null) => DomainEvent[],
  enqueue: () => ReturnType<typeof kvDeliveryScheduler.schedule> = () => [],
) {
  await s.store.transact(async (tx) => {
    const d = await tx.projection<WebhookDeliveryDoc>("webhook_delivery", [msg.deliveryId]);
    if (!d || d.status !== "pending" || d.attempts.length !== msg.attempt - 1) {
      return { result: null };
    }
    const e = await tx.projection<WebhookEndpointDoc>("webhook", [d.endpointId]);
    const events = decide(d, e);
    if (events.length === 0) return { result: null };
    return {
      append: [{ stream: `webhook-${d.endpointId}`, expectedVersion: "any", events }],
      enqueue: enqueue(),
      result: null,
    };
  });
}

async function readDelivery(kv: Deno.Kv, id: string) {
  return (await kv.get<WebhookDeliveryDoc>(projectionKey("webhook_delivery", [id]))).value;
}
