/**
 * Every event type as a value, for the checks that need to walk them (which projection folds
 * which event). The compiler keeps the list complete: a type added to `DomainEvent` and not here
 * fails the `_complete` line below.
 */
import type { DomainEvent, EventType, StoredEvent } from "./types.ts";

export const EVENT_TYPES = [
  "AccessPaymentQuoted",
  "AccessUnderpaid",
  "AccessTopUpQuoted",
  "AccessPurchased",
  "KeyIssued",
  "KeyRotated",
  "KeyDeleted",
  "KeyBanned",
  "KeyBanLifted",
  "KeySuspended",
  "MetadataHosted",
  "MetadataImageUnfetchable",
  "TokenBuilt",
  "TransactionSubmitted",
  "CreationConfirmed",
  "CreationFailed",
  "TransactionFailed",
  "CreationUnverified",
  "BuildExpired",
  "WebhookEndpointRegistered",
  "WebhookEndpointDeleted",
  "WebhookEndpointDisabled",
  "WebhookDeliveryScheduled",
  "WebhookDeliveryAttempted",
  "WebhookDeliveryAbandoned",
] as const satisfies readonly EventType[];

type Missing = Exclude<EventType, typeof EVENT_TYPES[number]>;
const _complete: [Missing] extends [never] ? true : Missing = true;

/** The events of one build's life, each naming its `buildId`: built, then its outcome. */
export const BUILD_EVENT_TYPES = [
  "TokenBuilt",
  "TransactionSubmitted",
  "CreationConfirmed",
  "CreationFailed",
  "TransactionFailed",
  "CreationUnverified",
  "BuildExpired",
] as const satisfies readonly EventType[];

export type BuildEventType = typeof BUILD_EVENT_TYPES[number];
export type BuildEvent = Extract<DomainEvent, { type: BuildEventType }>;

const buildTypes: ReadonlySet<EventType> = new Set(BUILD_EVENT_TYPES);

export const isBuildEvent = (e: StoredEvent): e is StoredEvent<BuildEvent> =>
  buildTypes.has(e.type);
