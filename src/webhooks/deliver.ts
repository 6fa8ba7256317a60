/**
 * The queue job that makes one delivery attempt and records it. Idempotent: a message for an
 * attempt already recorded (KV delivers at least once) is dropped, and the record is written only
 * if no other run recorded that attempt first. A receiver's failure is an outcome, recorded and
 * retried on the schedule; only our own faults (KV) throw, for the queue to redeliver.
 */
import { keysProjection } from "../../projections/keys.ts";
import { kvReads, read } from "../commands/read.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import type { WebhookDeliveryAbandoned } from "../../events/types.ts";
import type { WebhookEvent } from "../../events/types.ts";
import type { DeliveryMessage, DeliveryScheduler, Services } from "../services.ts";
import type { AttemptResult } from "./decide.ts";
import {
  type AbandonDelivery,
  decideAbandon,
  decideRecordAttempt,
  type DeliveryState,
  type RecordAttempt,
  retryInMs,
} from "./commands.ts";
import { loadDelivery, readDelivery, readEndpoint } from "./reads.ts";
import { deliveryMessage, kvDeliveryScheduler } from "./scheduler.ts";
import { openSecret } from "./secret.ts";
import { sendSigned } from "./send.ts";

export type Sender = typeof sendSigned;

export async function deliverWebhook(
  s: Services,
  msg: DeliveryMessage,
  send: Sender = sendSigned,
): Promise<void> {
  const reads = kvReads(s.kv);
  const delivery = await readDelivery(reads, msg.deliveryId);
  if (!delivery || delivery.status !== "pending" || delivery.attempts.length !== msg.attempt - 1) {
    return;
  }
  const endpoint = await readEndpoint(reads, delivery.endpointId);
  const key = endpoint && await read(reads, keysProjection, [endpoint.keyId]);
  if (!endpoint || endpoint.status !== "enabled" || !key || key.deleted) {
    const reason = !endpoint
      ? "endpoint deleted"
      : endpoint.status !== "enabled"
      ? "endpoint disabled"
      : "API key deleted";
    await runCommand(abandonCommand, { ...attemptOf(msg), reason }, {
      store: s.store,
      clock: s.clock,
    });
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

const attemptOf = (msg: DeliveryMessage) => ({
  deliveryId: msg.deliveryId,
  attempt: msg.attempt,
});

/** A delivery's events go to its endpoint's stream (decided only once the delivery is read). */
const deliveryStream = (_cmd: unknown, s: DeliveryState) => `webhook-${s.delivery!.endpointId}`;

/** Each appends only while the delivery still awaits this message's attempt. */
const abandonCommand: CommandHandler<
  AbandonDelivery,
  DeliveryState,
  WebhookDeliveryAbandoned,
  never,
  null
> = {
  load: loadDelivery,
  decide: decideAbandon,
  stream: deliveryStream,
  expectedVersion: "any",
  respond: () => null,
};

/** The next attempt, when the schedule asks for one, is queued in the record's commit. */
const recordAttemptCommand = (
  scheduler: DeliveryScheduler,
): CommandHandler<RecordAttempt, DeliveryState, WebhookEvent, never, null> => ({
  load: loadDelivery,
  decide: decideRecordAttempt,
  stream: deliveryStream,
  expectedVersion: "any",
  respond: () => null,
  enqueue(events, _s, cmd, now) {
    const retry = retryInMs(events, now);
    return retry === null
      ? []
      : scheduler.schedule(deliveryMessage(cmd.deliveryId, cmd.attempt + 1), retry);
  },
});

async function recordAttempt(s: Services, msg: DeliveryMessage, result: AttemptResult) {
  const scheduler = s.webhookScheduler ?? kvDeliveryScheduler;
  await runCommand(recordAttemptCommand(scheduler), { ...attemptOf(msg), result }, {
    store: s.store,
    clock: s.clock,
  });
}
