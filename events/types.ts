/**
 * Every fact the service records. Events are past-tense, versioned (`v`) and never edited once
 * written; a new shape gets a new `v`, and folds keep understanding the old ones.
 */
import type { TokenBuiltData } from "./token-built.ts";
import type {
  TokenUpdateBuiltData,
  TokenUpdateFailedData,
  TokenUpdateLandedData,
  TokenUpdateSubmittedData,
} from "./token-update.ts";

/** v2 adds `expiresAt`; a v1 quote expires QUOTE_TTL_S's default (600 s) after it was made. */
export interface AccessPaymentQuoted {
  type: "AccessPaymentQuoted";
  v: 1 | 2;
  data: {
    purchaseId: string;
    wallet: string;
    currency: "SOL" | "STABLECOIN";
    /** Base units of the currency (lamports, or stablecoin base units). */
    amount: string;
    usd: number;
    solUsd: number | null;
    reference: string;
    treasury: string;
    lastValidBlockHeight: number;
    /** Milliseconds since the epoch: a payment landed later is priced at the price of its day. */
    expiresAt?: number;
  };
}

/**
 * A payment landed that does not cover what is owed (late, so priced at the current price, or
 * short): what it brought and what is still missing. The purchase stays unpaid; a top-up pays
 * the rest.
 */
export interface AccessUnderpaid {
  type: "AccessUnderpaid";
  v: 1;
  data: {
    purchaseId: string;
    signature: string;
    slot: number;
    /** Seconds, as the chain gave it; null when the RPC had none (priced as late). */
    blockTime: number | null;
    /** Base units this payment brought. */
    received: string;
    /** Landed after the quote in force expired: priced at the price then, not the quote's. */
    late: boolean;
    /** The SOL price the payment was priced at (null: a stablecoin). */
    solUsd: number | null;
    /** What is still owed, in base units at `solUsd`. */
    shortfall: string;
  };
}

/** A new quote for what an underpaid purchase still owes, on the purchase's own reference. */
export interface AccessTopUpQuoted {
  type: "AccessTopUpQuoted";
  v: 1;
  data: {
    purchaseId: string;
    /** What is still owed, in base units at `solUsd`. */
    amount: string;
    solUsd: number | null;
    lastValidBlockHeight: number;
    expiresAt: number;
  };
}

export interface AccessPurchased {
  type: "AccessPurchased";
  v: 1;
  data: {
    purchaseId: string;
    wallet: string;
    currency: "SOL" | "STABLECOIN";
    /** Base units received in all, across every payment of the purchase. */
    amount: string;
    /** The payment that completed it. */
    signature: string;
    slot: number;
  };
}

export interface KeyIssued {
  type: "KeyIssued";
  v: 1;
  data: { keyId: string; purchaseId: string; wallet: string; secretMac: string };
}

export interface KeyRotated {
  type: "KeyRotated";
  v: 1;
  data: { keyId: string; purchaseId: string; secretMac: string };
}

export interface KeyDeleted {
  type: "KeyDeleted";
  v: 1;
  data: { keyId: string; purchaseId: string };
}

export interface KeyBanned {
  type: "KeyBanned";
  v: 1;
  data: { keyId: string; reason: string };
}

export interface KeyBanLifted {
  type: "KeyBanLifted";
  v: 1;
  data: { keyId: string };
}

export interface KeySuspended {
  type: "KeySuspended";
  v: 1;
  data: { keyId: string; reason: string };
}

/** A metadata call: its id, the key and purchase it counts against, and the day. */
interface MetadataCall {
  id: string;
  keyId: string;
  purchaseId: string;
  /** UTC day (YYYY-MM-DD) the call counts against. */
  day: string;
}

export interface MetadataHosted {
  type: "MetadataHosted";
  v: 1;
  data: MetadataCall & {
    imageId: string;
    imageExt: "png" | "jpg" | "webp";
    imageMime: string;
    imageBytes: number;
    imageChunks: number;
    /** True when this image was not hosted before (content addressed), so it counts once. */
    newImage: boolean;
    /** The exact JSON document served at /m/<id>.json. */
    json: string;
  };
}

/**
 * A metadata call accepted for processing whose image URL could not be used (fetch refused,
 * failed, too large, not an image): it counts toward the day's metadata limit like a hosted one,
 * since the service did the work of fetching. Invalid input refused before any work is not one.
 */
export interface MetadataImageUnfetchable {
  type: "MetadataImageUnfetchable";
  v: 1;
  data: MetadataCall & {
    /**
     * Why, as the 400's `fields.imageUrl` said it (it may name the host or address). The URL's
     * path and query are not kept.
     */
    reason: string;
  };
}

/** Its data is defined once, as a schema the build record and its view are picked from. */
export interface TokenBuilt {
  type: "TokenBuilt";
  v: 1;
  data: TokenBuiltData;
}

export interface TransactionSubmitted {
  type: "TransactionSubmitted";
  v: 1;
  data: { buildId: number; mint: string; signature: string; via: "relay" | "watcher" };
}

export interface CreationConfirmed {
  type: "CreationConfirmed";
  v: 1;
  data: {
    buildId: number;
    mint: string;
    signature: string;
    slot: number;
    blockTime: number | null;
    feeLamportsSeen: string;
    supplyRaw: string;
    /** Read from the landed transaction (absent in events recorded before they were). */
    decimalsSeen?: number | null;
    recipientSeen?: string | null;
    /** The build's key, purchase and payer, for the conduct read models (absent before then). */
    keyId?: string;
    purchaseId?: string;
    payer?: string;
  };
}

export interface CreationFailed {
  type: "CreationFailed";
  v: 1;
  data: { buildId: number; mint: string; signature: string | null; reason: string };
}

/**
 * A transaction the build's payer signed landed with an error. Not the build's outcome yet: a
 * wallet may change a transaction before sending it (priority fee, assertions), which gives it
 * another signature, and another version may still land and succeed until the blockhash expires.
 * At expiry with no success seen, `CreationFailed` records the outcome.
 */
export interface TransactionFailed {
  type: "TransactionFailed";
  v: 1;
  data: { buildId: number; mint: string; signature: string; slot: number; reason: string };
}

export interface CreationUnverified {
  type: "CreationUnverified";
  v: 1;
  data: {
    buildId: number;
    keyId: string;
    mint: string;
    signature: string;
    slot: number;
    blockTime: number | null;
    feeLamportsSeen: string;
    supplyRawSeen: string;
    /** Read from the landed transaction (absent in events recorded before they were). */
    decimalsSeen?: number | null;
    recipientSeen?: string | null;
    problems: string[];
    /** The build's purchase and payer, for the conduct read models (absent before then). */
    purchaseId?: string;
    payer?: string;
    /** The payer was the wallet that bought the purchase's key: the key's own conduct. */
    byKeyWallet?: boolean;
  };
}

export interface BuildExpired {
  type: "BuildExpired";
  v: 1;
  data: {
    buildId: number;
    mint: string;
    blockHeight: number;
    /** Why, when not the blockhash's height: a durable nonce build's nonce moved on. */
    reason?: string;
  };
}

/**
 * The build re-issued (POST /v1/tokens/{mint}/refresh): the same mint, seed, reference and
 * instructions under a fresh blockhash. Every message issued for the build stays its own; the
 * first to land is the creation.
 */
export interface BuildRefreshed {
  type: "BuildRefreshed";
  v: 1;
  data: {
    buildId: number;
    mint: string;
    /** The build's reference, so a build the watcher had expired can be reopened. */
    reference: string;
    blockhash: string;
    lastValidBlockHeight: number;
    /** SHA-256 (hex) of the new message. */
    messageHash: string;
    /** Our fee in the new message, and how it was set. */
    feeLamports: string;
    feeUsd: number;
    solUsd: number;
    /** "quoted": the build's quote still held; "repriced": at the SOL price of the refresh. */
    feeQuote: "quoted" | "repriced";
  };
}

/** An update of a token's metadata or authorities built for its current authority to sign. */
export interface TokenUpdateBuilt {
  type: "TokenUpdateBuilt";
  v: 1;
  data: TokenUpdateBuiltData;
}

/** The relay sent the update's transaction, signed by its authority. */
export interface TokenUpdateSubmitted {
  type: "TokenUpdateSubmitted";
  v: 1;
  data: TokenUpdateSubmittedData;
}

/** The update's transaction landed, succeeded and did what the update said (read back). */
export interface TokenUpdateLanded {
  type: "TokenUpdateLanded";
  v: 1;
  data: TokenUpdateLandedData;
}

/** The update's transaction landed with an error, or its blockhash expired unused. */
export interface TokenUpdateFailed {
  type: "TokenUpdateFailed";
  v: 1;
  data: TokenUpdateFailedData;
}

// Webhooks (issue 20): endpoints a key registers, and every delivery attempt to them.

/**
 * The Standard Webhooks event types sent per build: one per final outcome, and one per refresh
 * (which reopens a build the watcher had expired).
 */
export type WebhookEventType =
  | "token.confirmed"
  | "token.unverified"
  | "token.failed"
  | "token.expired"
  | "token.refreshed"
  | "token.updated"
  | "token.update_failed";

export interface WebhookEndpointRegistered {
  type: "WebhookEndpointRegistered";
  v: 1;
  data: {
    endpointId: string;
    keyId: string;
    url: string;
    eventTypes: WebhookEventType[];
    description: string | null;
    /** The whsec_ signing secret, AES-GCM sealed with a key derived from KEY_PEPPER. */
    secretSealed: string;
  };
}

export interface WebhookEndpointDeleted {
  type: "WebhookEndpointDeleted";
  v: 1;
  data: { endpointId: string; keyId: string };
}

/** Every attempt failed since `failingSince` (ms), for longer than the disable threshold. */
export interface WebhookEndpointDisabled {
  type: "WebhookEndpointDisabled";
  v: 1;
  data: { endpointId: string; keyId: string; failingSince: number; reason: string };
}

export interface WebhookDeliveryScheduled {
  type: "WebhookDeliveryScheduled";
  v: 1;
  data: {
    deliveryId: string;
    endpointId: string;
    keyId: string;
    /** The Standard Webhooks message id (webhook-id): one per build outcome, kept by replays. */
    messageId: string;
    eventType: WebhookEventType;
    buildId: number;
    /** The exact JSON body signed and sent. */
    payload: string;
    /** The delivery this one replays, if any. */
    replayOf: string | null;
  };
}

export interface WebhookDeliveryAttempted {
  type: "WebhookDeliveryAttempted";
  v: 1;
  data: {
    deliveryId: string;
    endpointId: string;
    attempt: number;
    ok: boolean;
    /** The receiver's HTTP status, null when none came back. */
    httpStatus: number | null;
    /** Why it failed, safe to show to the key's owner; null when ok. */
    error: string | null;
    durationMs: number;
    /** When the next attempt is due (ms), null when none will follow. */
    nextAttemptAt: number | null;
  };
}

export interface WebhookDeliveryAbandoned {
  type: "WebhookDeliveryAbandoned";
  v: 1;
  data: { deliveryId: string; endpointId: string; reason: string };
}

export type WebhookEvent =
  | WebhookEndpointRegistered
  | WebhookEndpointDeleted
  | WebhookEndpointDisabled
  | WebhookDeliveryScheduled
  | WebhookDeliveryAttempted
  | WebhookDeliveryAbandoned;

export type DomainEvent =
  | AccessPaymentQuoted
  | AccessUnderpaid
  | AccessTopUpQuoted
  | AccessPurchased
  | KeyIssued
  | KeyRotated
  | KeyDeleted
  | KeyBanned
  | KeyBanLifted
  | KeySuspended
  | MetadataHosted
  | MetadataImageUnfetchable
  | TokenBuilt
  | TransactionSubmitted
  | CreationConfirmed
  | CreationFailed
  | TransactionFailed
  | CreationUnverified
  | BuildExpired
  | BuildRefreshed
  | TokenUpdateBuilt
  | TokenUpdateSubmitted
  | TokenUpdateLanded
  | TokenUpdateFailed
  | WebhookEvent;

export type EventType = DomainEvent["type"];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** An event as it sits in the log: the domain fact plus its place in the log and the hash chain. */
export type StoredEvent<E extends DomainEvent = DomainEvent> = E & {
  /** Milliseconds since the epoch, UTC. */
  at: number;
  stream: string;
  streamPosition: number;
  position: number;
  prevHash: string;
  hash: string;
};
