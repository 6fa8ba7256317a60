/**
 * How a delivery attempt is put on the Deno KV queue: in the same atomic commit as the event that
 * decided it, so an outcome recorded is an attempt queued (at least once). Injected through
 * `Services.webhookScheduler` so tests can run the retry schedule on a fake clock instead of
 * waiting for it.
 */
import type { DeliveryMessage, DeliveryScheduler } from "../services.ts";

export const WEBHOOK_QUEUE_KIND: DeliveryMessage["kind"] = "webhook.deliver";

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
