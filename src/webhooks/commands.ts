/**
 * The webhook commands and their decisions: register and delete an endpoint, replay a delivery,
 * record an attempt or give a delivery up. Pure: ids, sealed secrets and the clock come in.
 */
import type {
  WebhookDeliveryAbandoned,
  WebhookDeliveryScheduled,
  WebhookEndpointDeleted,
  WebhookEndpointRegistered,
} from "../../events/types.ts";
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from "../../projections/webhooks.ts";
import { reject, type Rejection } from "../kernel/rejection.ts";
import { type AttemptResult, decideAttempt, MAX_ENDPOINTS_PER_KEY } from "./decide.ts";
import type { WebhookEvent } from "../../events/types.ts";

/** The endpoint as it will be recorded. */
export type RegisterEndpoint = WebhookEndpointRegistered["data"];

export function decideRegister(
  cmd: RegisterEndpoint,
  state: { endpointIds: string[] },
): WebhookEndpointRegistered[] | Rejection {
  if (state.endpointIds.length >= MAX_ENDPOINTS_PER_KEY) {
    return reject("invalid_request", "Request is invalid", {
      url: `at most ${MAX_ENDPOINTS_PER_KEY} endpoints per key; delete one first`,
    });
  }
  return [{ type: "WebhookEndpointRegistered", v: 1, data: cmd }];
}

export interface DeleteEndpoint {
  endpointId: string;
  keyId: string;
}

/** Deleting an endpoint already gone changes nothing. */
export const decideDelete = (
  cmd: DeleteEndpoint,
  endpoint: WebhookEndpointDoc | null,
): WebhookEndpointDeleted[] =>
  endpoint
    ? [{
      type: "WebhookEndpointDeleted",
      v: 1,
      data: { endpointId: cmd.endpointId, keyId: cmd.keyId },
    }]
    : [];

export interface ReplayDelivery {
  /** The new delivery's id. */
  deliveryId: string;
  originalId: string;
  endpointId: string;
  keyId: string;
}

export interface ReplayState {
  original: WebhookDeliveryDoc | null;
  endpoint: WebhookEndpointDoc | null;
}

/** Another key's endpoint reads as unknown; a disabled one takes no more deliveries. */
export function decideReplay(
  cmd: ReplayDelivery,
  { original, endpoint }: ReplayState,
): WebhookDeliveryScheduled[] | Rejection {
  if (!endpoint || endpoint.keyId !== cmd.keyId) {
    return reject("not_found", "No webhook endpoint of this key has that id");
  }
  if (!original || original.endpointId !== cmd.endpointId) {
    return reject("not_found", "No delivery of this endpoint has that id");
  }
  if (endpoint.status !== "enabled") {
    return reject("invalid_request", "Request is invalid", {
      endpoint: "disabled after failing for 3 days; register it again",
    });
  }
  return [{
    type: "WebhookDeliveryScheduled",
    v: 1,
    data: {
      deliveryId: cmd.deliveryId,
      endpointId: cmd.endpointId,
      keyId: cmd.keyId,
      messageId: original.messageId,
      eventType: original.eventType,
      buildId: original.buildId,
      payload: original.payload,
      replayOf: original.deliveryId,
    },
  }];
}

/** A queue message's attempt: recorded only while the delivery still awaits exactly it. */
export interface DeliveryAttempt {
  deliveryId: string;
  /** 1-based: the attempt this message is for. */
  attempt: number;
}

export interface DeliveryState {
  delivery: WebhookDeliveryDoc | null;
  endpoint: WebhookEndpointDoc | null;
}

const awaits = (cmd: DeliveryAttempt, d: WebhookDeliveryDoc | null): d is WebhookDeliveryDoc =>
  !!d && d.status === "pending" && d.attempts.length === cmd.attempt - 1;

export interface RecordAttempt extends DeliveryAttempt {
  result: AttemptResult;
}

export function decideRecordAttempt(
  cmd: RecordAttempt,
  { delivery, endpoint }: DeliveryState,
  now: number,
): WebhookEvent[] {
  if (!awaits(cmd, delivery) || !endpoint) return [];
  return decideAttempt(delivery, endpoint, cmd.result, now).events;
}

/** The pause before the next attempt the recorded attempt asks for, or null. */
export function retryInMs(events: WebhookEvent[], now: number): number | null {
  const attempted = events.find((e) => e.type === "WebhookDeliveryAttempted");
  const next = attempted?.type === "WebhookDeliveryAttempted" ? attempted.data.nextAttemptAt : null;
  return next === null ? null : next - now;
}

export interface AbandonDelivery extends DeliveryAttempt {
  reason: string;
}

export const decideAbandon = (
  cmd: AbandonDelivery,
  { delivery }: DeliveryState,
): WebhookDeliveryAbandoned[] =>
  awaits(cmd, delivery)
    ? [{
      type: "WebhookDeliveryAbandoned",
      v: 1,
      data: {
        deliveryId: delivery.deliveryId,
        endpointId: delivery.endpointId,
        reason: cmd.reason,
      },
    }]
    : [];
