/**
 * Webhook endpoints and their deliveries as folds over the webhook events: an endpoint record
 * (with how long it has been failing, for the disable rule), each key's endpoints, each delivery
 * with its attempts, and each endpoint's deliveries newest first.
 */
import type {
  StoredEvent,
  WebhookDeliveryScheduled,
  WebhookEndpointRegistered,
} from "../events/types.ts";
import type { DeclaredProjection } from "../events/projection.ts";

type Registered = WebhookEndpointRegistered["data"];
type Scheduled = WebhookDeliveryScheduled["data"];

/** The endpoint as registered, then its health. */
export interface WebhookEndpointDoc extends Registered {
  status: "enabled" | "disabled";
  /** Unix ms of the first failed attempt since the last success; null while healthy. */
  failingSince: number | null;
  createdAt: number;
  disabledAt: number | null;
}

export interface WebhookAttempt {
  attempt: number;
  /** Unix ms. */
  at: number;
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/** The delivery as scheduled, then its attempts. */
export interface WebhookDeliveryDoc extends Scheduled {
  status: "pending" | "delivered" | "failed";
  attempts: WebhookAttempt[];
  nextAttemptAt: number | null;
  failureReason: string | null;
  createdAt: number;
}

const endpointIdOf = (e: StoredEvent): string | null => {
  switch (e.type) {
    case "WebhookEndpointRegistered":
    case "WebhookEndpointDeleted":
    case "WebhookEndpointDisabled":
    case "WebhookDeliveryAttempted":
      return e.data.endpointId;
    default:
      return null;
  }
};

export const webhookEndpointProjection: DeclaredProjection<WebhookEndpointDoc> = {
  name: "webhook",
  handles: [
    "WebhookEndpointRegistered",
    "WebhookEndpointDeleted",
    "WebhookEndpointDisabled",
    "WebhookDeliveryAttempted",
  ],
  keysOf: (e) => {
    const id = endpointIdOf(e);
    return id === null ? [] : [[id]];
  },
  evolve(doc, e) {
    switch (e.type) {
      case "WebhookEndpointRegistered":
        return {
          endpointId: e.data.endpointId,
          keyId: e.data.keyId,
          url: e.data.url,
          eventTypes: e.data.eventTypes,
          description: e.data.description,
          secretSealed: e.data.secretSealed,
          status: "enabled",
          failingSince: null,
          createdAt: e.at,
          disabledAt: null,
        };
      case "WebhookEndpointDeleted":
        return null;
      case "WebhookEndpointDisabled":
        return doc && { ...doc, status: "disabled", disabledAt: e.at };
      case "WebhookDeliveryAttempted":
        if (!doc) return doc;
        return { ...doc, failingSince: e.data.ok ? null : doc.failingSince ?? e.at };
      default:
        return doc;
    }
  },
};

/** [keyId, endpointId] -> endpointId, for each endpoint the key has not deleted. */
export const webhooksByKeyProjection: DeclaredProjection<string> = {
  name: "webhook_by_key",
  handles: ["WebhookEndpointRegistered", "WebhookEndpointDeleted"],
  keysOf: (e) =>
    e.type === "WebhookEndpointRegistered" || e.type === "WebhookEndpointDeleted"
      ? [[e.data.keyId, e.data.endpointId]]
      : [],
  evolve: (_doc, e) => e.type === "WebhookEndpointRegistered" ? e.data.endpointId : null,
};

export const webhookDeliveryProjection: DeclaredProjection<WebhookDeliveryDoc> = {
  name: "webhook_delivery",
  handles: ["WebhookDeliveryScheduled", "WebhookDeliveryAttempted", "WebhookDeliveryAbandoned"],
  keysOf: (e) =>
    e.type === "WebhookDeliveryScheduled" || e.type === "WebhookDeliveryAttempted" ||
      e.type === "WebhookDeliveryAbandoned"
      ? [[e.data.deliveryId]]
      : [],
  evolve(doc, e) {
    if (e.type === "WebhookDeliveryScheduled") {
      const d = e.data;
      return {
        deliveryId: d.deliveryId,
        endpointId: d.endpointId,
        keyId: d.keyId,
        messageId: d.messageId,
        eventType: d.eventType,
        buildId: d.buildId,
        payload: d.payload,
        replayOf: d.replayOf,
        status: "pending",
        attempts: [],
        nextAttemptAt: e.at,
        failureReason: null,
        createdAt: e.at,
      };
    }
    if (!doc) return doc;
    if (e.type === "WebhookDeliveryAttempted") {
      const d = e.data;
      return {
        ...doc,
        status: d.ok ? "delivered" : doc.status,
        attempts: [...doc.attempts, {
          attempt: d.attempt,
          at: e.at,
          ok: d.ok,
          httpStatus: d.httpStatus,
          error: d.error,
          durationMs: d.durationMs,
        }],
        nextAttemptAt: d.nextAttemptAt,
      };
    }
    if (e.type === "WebhookDeliveryAbandoned") {
      return { ...doc, status: "failed", nextAttemptAt: null, failureReason: e.data.reason };
    }
    return doc;
  },
};

/** [endpointId, deliveryId] -> deliveryId; delivery ids sort by the time they were scheduled. */
export const webhookDeliveriesByEndpointProjection: DeclaredProjection<string> = {
  name: "webhook_delivery_by_endpoint",
  handles: ["WebhookDeliveryScheduled"],
  keysOf: (e) =>
    e.type === "WebhookDeliveryScheduled" ? [[e.data.endpointId, e.data.deliveryId]] : [],
  evolve: (doc, e) => e.type === "WebhookDeliveryScheduled" ? e.data.deliveryId : doc,
};
