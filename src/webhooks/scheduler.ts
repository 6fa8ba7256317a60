/**
 * How a delivery attempt is put on the Deno KV queue: in the same atomic commit as the event that
 * decided it, so an outcome recorded is an attempt queued (at least once). Injected through
 * `Services.webhookScheduler` so tests can run the retry schedule on a fake clock instead of
 * waiting for it.
 */
import type { Enqueue } from "../../events/store.ts";

export const WEBHOOK_QUEUE_KIND = "webhook.deliver";

export interface DeliveryMessage {
  kind: typeof WEBHOOK_QUEUE_KIND;
  deliveryId: string;
  /** The attempt this message makes (1-based); a message for an attempt already made is dropped. */
  attempt: number;
}

export interface DeliveryScheduler {
  /** The enqueue entries that run `msg` after `delayMs`. */
  schedule(msg: DeliveryMessage, delayMs: number): Enqueue[];
}

export const kvDeliveryScheduler: DeliveryScheduler = {
  schedule: (msg, delayMs) => [{ value: msg, delay: delayMs > 0 ? delayMs : undefined }],
};

export const deliveryMessage = (deliveryId: string, attempt: number): DeliveryMessage => ({
  kind: WEBHOOK_QUEUE_KIND,
  deliveryId,
  attempt,
});

export function isDeliveryMessage(
  m: Record<string, unknown>,
): m is DeliveryMessage & Record<string, unknown> {
  return m.kind === WEBHOOK_QUEUE_KIND && typeof m.deliveryId === "string" &&
    Number.isSafeInteger(m.attempt);
}
