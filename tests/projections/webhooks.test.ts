import { assertEquals } from "../support/assert.ts";
import {
  webhookDeliveriesByEndpointProjection,
  type WebhookDeliveryDoc,
  webhookDeliveryProjection,
  type WebhookEndpointDoc,
  webhookEndpointProjection,
  webhooksByKeyProjection,
} from "../../projections/webhooks.ts";
import { event, given } from "./support/events.ts";

const registered = event("WebhookEndpointRegistered");
const endpoint = (history: ReturnType<typeof event>[], next: ReturnType<typeof event>) =>
  given(webhookEndpointProjection, history).when(next).doc(["ep1"]) as WebhookEndpointDoc | null;

Deno.test("webhook: given nothing, when registered, then an enabled, healthy endpoint", () => {
  const d = endpoint([], registered);
  assertEquals([d?.status, d?.failingSince, d?.url], [
    "enabled",
    null,
    "https://hooks.example.test/x",
  ]);
});

Deno.test("webhook: given an endpoint, when attempts fail then one succeeds, then failingSince is set then cleared", () => {
  const failed = event("WebhookDeliveryAttempted", {}, 1_000);
  assertEquals(endpoint([registered], failed)?.failingSince, failed.at);
  // A second failure keeps the first one's time.
  assertEquals(
    endpoint([registered, failed], event("WebhookDeliveryAttempted", {}, 9_000))?.failingSince,
    failed.at,
  );
  assertEquals(
    endpoint([registered, failed], event("WebhookDeliveryAttempted", { ok: true }))?.failingSince,
    null,
  );
});

Deno.test("webhook: given an endpoint, when disabled, then disabled; when deleted, then gone", () => {
  const disabled = event("WebhookEndpointDisabled", {}, 2_000);
  assertEquals(endpoint([registered], disabled)?.disabledAt, disabled.at);
  assertEquals(endpoint([registered], event("WebhookEndpointDeleted")), null);
});

Deno.test("webhook_by_key: when registered the key lists it; when deleted the row goes", () => {
  assertEquals(given(webhooksByKeyProjection, []).when(registered).doc(["key1", "ep1"]), "ep1");
  assertEquals(
    given(webhooksByKeyProjection, [registered]).when(event("WebhookEndpointDeleted")).doc([
      "key1",
      "ep1",
    ]),
    null,
  );
});

const scheduled = event("WebhookDeliveryScheduled");
const delivery = (history: ReturnType<typeof event>[], next: ReturnType<typeof event>) =>
  given(webhookDeliveryProjection, history).when(next).doc(["del1"]) as WebhookDeliveryDoc | null;

Deno.test("webhook_delivery: given nothing, when scheduled, then pending and due now", () => {
  const d = delivery([], scheduled);
  assertEquals([d?.status, d?.attempts, d?.nextAttemptAt], ["pending", [], scheduled.at]);
});

Deno.test("webhook_delivery: given a scheduled delivery, when attempted, then the attempt is kept", () => {
  const d = delivery([scheduled], event("WebhookDeliveryAttempted", {}, 500));
  assertEquals(d?.status, "pending");
  assertEquals(d?.attempts.map((a) => [a.attempt, a.httpStatus, a.at]), [[
    1,
    500,
    scheduled.at + 500,
  ]]);
  assertEquals(d?.nextAttemptAt, scheduled.at + 5_000);
  assertEquals(
    delivery([scheduled], event("WebhookDeliveryAttempted", { ok: true }))?.status,
    "delivered",
  );
});

Deno.test("webhook_delivery: given a failing delivery, when abandoned, then failed with the reason", () => {
  const d = delivery(
    [scheduled, event("WebhookDeliveryAttempted")],
    event("WebhookDeliveryAbandoned"),
  );
  assertEquals([d?.status, d?.nextAttemptAt, d?.failureReason], ["failed", null, "gave up"]);
});

Deno.test("webhook_delivery_by_endpoint: when scheduled, then the endpoint lists the delivery", () => {
  assertEquals(
    given(webhookDeliveriesByEndpointProjection, []).when(scheduled).doc(["ep1", "del1"]),
    "del1",
  );
});
