/**
 * Every fact the service records. Events are past-tense, versioned (`v`) and never edited once
 * written; a new shape gets a new `v`, and folds keep understanding the old ones.
 */

export interface AccessPaymentQuoted {
  type: "AccessPaymentQuoted";
  v: 1;
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
  };
}

export interface AccessPurchased {
  type: "AccessPurchased";
  v: 1;
  data: {
    purchaseId: string;
    wallet: string;
    currency: "SOL" | "STABLECOIN";
    amount: string;
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

export interface MetadataHosted {
  type: "MetadataHosted";
  v: 1;
  data: {
    id: string;
    keyId: string;
    purchaseId: string;
    /** UTC day (YYYY-MM-DD) the item counts against. */
    day: string;
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
  data: {
    id: string;
    keyId: string;
    purchaseId: string;
    /** UTC day (YYYY-MM-DD) the call counts against. */
    day: string;
    /**
     * Why, as the 400's `fields.imageUrl` said it (it may name the host or address). The URL's
     * path and query are not kept.
     */
    reason: string;
  };
}

export interface TokenBuilt {
  type: "TokenBuilt";
  v: 1;
  data: {
    buildId: number;
    keyId: string;
    purchaseId: string;
    day: string;
    mint: string;
    seed: string;
    reference: string;
    payer: string;
    recipient: string;
    recipientTokenAccount: string;
    metadataAccount: string;
    name: string;
    symbol: string;
    uri: string;
    decimals: number;
    supplyRaw: string;
    revokeMint: boolean;
    revokeFreeze: boolean;
    immutableMetadata: boolean;
    feeLamports: string;
    feeUsd: number;
    solUsd: number;
    treasury: string;
    blockhash: string;
    lastValidBlockHeight: number;
    /** SHA-256 (hex) of the exact message bytes the payer is asked to sign. */
    messageHash: string;
    /** Absent: the classic SPL Token program (events from before carry none). */
    tokenProgram?: "token-2022";
    /** Token-2022 TransferFeeConfig; authority null: the fee is permanent. */
    transferFee?: { basisPoints: number; maximum: string; authority: string | null };
    /** The vanity pattern the seed was ground for, and how many seeds were tried. */
    vanity?: { prefix: string; suffix: string; ignoreCase: boolean; tries: number };
  };
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
  };
}

export interface CreationFailed {
  type: "CreationFailed";
  v: 1;
  data: { buildId: number; mint: string; signature: string | null; reason: string };
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
  };
}

export interface BuildExpired {
  type: "BuildExpired";
  v: 1;
  data: { buildId: number; mint: string; blockHeight: number };
}

export type DomainEvent =
  | AccessPaymentQuoted
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
  | CreationUnverified
  | BuildExpired;

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
