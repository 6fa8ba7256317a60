/**
 * Every event type as a value, for the checks that need to walk them (which projection folds
 * which event). The compiler keeps the list complete: a type added to `DomainEvent` and not here
 * fails the `_complete` line below.
 */
import type { DomainEvent, EventType, StoredEvent } from "./types.ts";

/** A purchase of access, as the access commands emit them (src/domain/access/events.ts). */
export const PURCHASE_EVENT_TYPES = [
  "AccessPaymentQuoted",
  "AccessUnderpaid",
  "AccessTopUpQuoted",
  "AccessPurchased",
] as const satisfies readonly EventType[];

/** A key's life: issued, rotated and deleted by its owner; banned, lifted, suspended by us. */
export const KEY_EVENT_TYPES = [
  "KeyIssued",
  "KeyRotated",
  "KeyDeleted",
  "KeyBanned",
  "KeyBanLifted",
  "KeySuspended",
] as const satisfies readonly EventType[];

/** The events of one build's life, each naming its `buildId`: built (and re-issued), then its outcome. */
export const BUILD_EVENT_TYPES = [
  "TokenBuilt",
  "TransactionSubmitted",
  "CreationConfirmed",
  "CreationFailed",
  "TransactionFailed",
  "CreationUnverified",
  "BuildExpired",
  "BuildRefreshed",
] as const satisfies readonly EventType[];

/** The events of one token update, each naming its `updateId` and the `buildId` of its token. */
export const UPDATE_EVENT_TYPES = [
  "TokenUpdateBuilt",
  "TokenUpdateSubmitted",
  "TokenUpdateLanded",
  "TokenUpdateFailed",
] as const satisfies readonly EventType[];

export const EVENT_TYPES = [
  ...PURCHASE_EVENT_TYPES,
  ...KEY_EVENT_TYPES,
  "MetadataHosted",
  "MetadataImageUnfetchable",
  ...BUILD_EVENT_TYPES,
  ...UPDATE_EVENT_TYPES,
  "WebhookEndpointRegistered",
  "WebhookEndpointDeleted",
  "WebhookEndpointDisabled",
  "WebhookDeliveryScheduled",
  "WebhookDeliveryAttempted",
  "WebhookDeliveryAbandoned",
] as const satisfies readonly EventType[];

type Missing = Exclude<EventType, typeof EVENT_TYPES[number]>;
const _complete: [Missing] extends [never] ? true : Missing = true;

export type BuildEventType = typeof BUILD_EVENT_TYPES[number];
export type BuildEvent = Extract<DomainEvent, { type: BuildEventType }>;

const buildTypes: ReadonlySet<EventType> = new Set(BUILD_EVENT_TYPES);

export const isBuildEvent = (e: StoredEvent): e is StoredEvent<BuildEvent> =>
  buildTypes.has(e.type);

export type UpdateEventType = typeof UPDATE_EVENT_TYPES[number];
export type UpdateEvent = Extract<DomainEvent, { type: UpdateEventType }>;

const updateTypes: ReadonlySet<EventType> = new Set(UPDATE_EVENT_TYPES);

export const isUpdateEvent = (e: StoredEvent): e is StoredEvent<UpdateEvent> =>
  updateTypes.has(e.type);
