/**
 * Webhook decisions as pure functions: which deliveries a build outcome schedules, the Standard
 * Webhooks payload it carries, and what an attempt's result leads to (delivered, retry later,
 * given up, endpoint disabled). The clock's reading is passed in.
 */
import type {
  DomainEvent,
  StoredEvent,
  WebhookDeliveryScheduled,
  WebhookEvent,
  WebhookEventType,
} from "../../events/types.ts";
import { type BuildDoc, buildsProjection } from "../../projections/builds.ts";
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from "../../projections/webhooks.ts";

export const WEBHOOK_EVENT_TYPES = [
  "token.confirmed",
  "token.unverified",
  "token.failed",
  "token.expired",
  "token.refreshed",
  "token.updated",
  "token.update_failed",
] as const satisfies readonly WebhookEventType[];

/**
 * The pause after attempt n (1-based) before attempt n + 1: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h (the schedule the Standard Webhooks reference implementation uses). Eight attempts over
 * 27 h 35 min, so a receiver down for a whole day still gets the event.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3_600_000;
export const MAX_ENDPOINTS_PER_KEY = 10;
/** Each attempt: connect, send, and the receiver's status line. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

export function webhookTypeOf(e: DomainEvent): WebhookEventType | null {
  switch (e.type) {
    case "CreationConfirmed":
      return "token.confirmed";
    case "CreationUnverified":
      return "token.unverified";
    case "CreationFailed":
      return "token.failed";
    case "BuildExpired":
      return "token.expired";
    case "BuildRefreshed":
      return "token.refreshed";
    default:
      return null;
  }
}

/** What a `token.refreshed` body adds: the re-issued message and how its fee was set. */
export interface RefreshDetail {
  blockhash: string;
  lastValidBlockHeight: number;
  feeQuote: "quoted" | "repriced";
}

const refreshDetail = (e: DomainEvent): RefreshDetail | undefined =>
  e.type === "BuildRefreshed"
    ? {
      blockhash: e.data.blockhash,
      lastValidBlockHeight: e.data.lastValidBlockHeight,
      feeQuote: e.data.feeQuote,
    }
    : undefined;

/**
 * The Standard Webhooks body `{type, timestamp, data}` for a build's outcome. `b` is the record
 * with the outcome folded in: after a refresh its fee is the newest message's.
 */
export function outcomePayload(
  type: WebhookEventType,
  b: BuildDoc,
  at: number,
  refresh?: RefreshDetail,
): string {
  return JSON.stringify({
    type,
    timestamp: new Date(at).toISOString(),
    data: {
      buildId: b.buildId,
      mint: b.mint,
      status: b.status,
      signature: b.signature,
      name: b.name,
      symbol: b.symbol,
      payer: b.payer,
      recipient: b.recipient,
      supplyRaw: b.supplyRaw,
      supplyRawSeen: b.supplyRawSeen,
      slot: b.slot,
      confirmedAt: b.confirmedAt,
      problems: b.problems,
      fee: {
        lamports: b.feeLamports,
        lamportsSeen: b.feeLamportsSeen,
        verified: b.feeVerified,
        treasury: b.treasury,
      },
      refreshes: b.refreshes ?? 0,
      ...(refresh ? { refresh } : {}),
    },
  });
}

/**
 * The webhook-id receivers deduplicate on: one per outcome that happened. A refresh reopens an
 * expired build, so `token.refreshed` and a later `token.expired` can happen again for one build:
 * after a refresh an outcome's id carries the build's refresh count (`refreshes`), so a second
 * expiry is not dropped as a copy of the first. Before any refresh it is `msg_<buildId>_<outcome>`.
 */
export const messageIdOf = (buildId: number, type: WebhookEventType, refreshes = 0) =>
  `msg_${buildId}_${type.slice("token.".length)}${refreshes > 0 ? `_${refreshes}` : ""}`;

/** Time-ordered, so an endpoint's deliveries list newest first by key. */
export function newDeliveryId(now: number): string {
  const rand = crypto.getRandomValues(new Uint8Array(6));
  return `dlv_${now.toString(36).padStart(10, "0")}${
    [...rand].map((b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

export function newEndpointId(): string {
  const rand = crypto.getRandomValues(new Uint8Array(10));
  return `we_${[...rand].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The deliveries a lifecycle commit schedules: one per outcome event and per enabled endpoint of
 * the build's key that subscribed to its type. `build` is the record before the events.
 */
export function scheduleOutcomeDeliveries(
  build: BuildDoc,
  events: DomainEvent[],
  endpoints: WebhookEndpointDoc[],
  now: number,
): WebhookDeliveryScheduled[] {
  const out: WebhookDeliveryScheduled[] = [];
  let after: BuildDoc | null = build;
  for (const e of events) {
    // The record as it will read once this event is folded: the same fold the store runs.
    after = buildsProjection.evolve(after, { ...e, at: now } as StoredEvent, [build.buildId]);
    const type = webhookTypeOf(e);
    if (!type || !after) continue;
    out.push(...toSubscribers(endpoints, type, now, {
      messageId: messageIdOf(build.buildId, type, after.refreshes ?? 0),
      buildId: build.buildId,
      payload: outcomePayload(type, after, now, refreshDetail(e)),
    }));
  }
  return out;
}

/** One delivery of a message to each enabled endpoint subscribed to its type. */
export function toSubscribers(
  endpoints: WebhookEndpointDoc[],
  type: WebhookEventType,
  now: number,
  m: { messageId: string; buildId: number; payload: WebhookDeliveryScheduled["data"]["payload"] },
): WebhookDeliveryScheduled[] {
  return endpoints
    .filter((ep) => ep.status === "enabled" && ep.eventTypes.includes(type))
    .map((ep) => ({
      type: "WebhookDeliveryScheduled",
      v: 1,
      data: {
        deliveryId: newDeliveryId(now),
        endpointId: ep.endpointId,
        keyId: ep.keyId,
        messageId: m.messageId,
        eventType: type,
        buildId: m.buildId,
        payload: m.payload,
        replayOf: null,
      },
    }));
}

export interface AttemptResult {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

export interface AttemptDecision {
  events: WebhookEvent[];
  /** Pause before the next attempt, or null when none follows. */
  retryInMs: number | null;
}

/** What an attempt's result leads to. `endpoint` is the record before this attempt. */
export function decideAttempt(
  delivery: WebhookDeliveryDoc,
  endpoint: WebhookEndpointDoc,
  result: AttemptResult,
  now: number,
): AttemptDecision {
  const attempt = delivery.attempts.length + 1;
  const base = { deliveryId: delivery.deliveryId, endpointId: delivery.endpointId };
  if (result.ok) {
    return {
      events: [{
        type: "WebhookDeliveryAttempted",
        v: 1,
        data: { ...base, attempt, ...result, error: null, nextAttemptAt: null },
      }],
      retryInMs: null,
    };
  }
  const failingSince = endpoint.failingSince ?? now;
  const disable = now - failingSince >= DISABLE_AFTER_MS;
  const retryInMs = !disable && attempt < MAX_ATTEMPTS ? RETRY_DELAYS_MS[attempt - 1] : null;
  const events: WebhookEvent[] = [{
    type: "WebhookDeliveryAttempted",
    v: 1,
    data: {
      ...base,
      attempt,
      ...result,
      nextAttemptAt: retryInMs === null ? null : now + retryInMs,
    },
  }];
  if (disable) {
    const days = DISABLE_AFTER_MS / 86_400_000;
    events.push({
      type: "WebhookEndpointDisabled",
      v: 1,
      data: {
        endpointId: endpoint.endpointId,
        keyId: endpoint.keyId,
        failingSince,
        reason: `every delivery attempt failed for ${days} days (last: ${result.error})`,
      },
    }, {
      type: "WebhookDeliveryAbandoned",
      v: 1,
      data: { ...base, reason: "endpoint disabled after failing for 3 days" },
    });
  } else if (retryInMs === null) {
    events.push({
      type: "WebhookDeliveryAbandoned",
      v: 1,
      data: { ...base, reason: `all ${MAX_ATTEMPTS} attempts failed` },
    });
  }
  return { events, retryInMs };
}
