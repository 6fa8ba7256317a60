/**
 * Given/when/then for projections, pure: fold events through a projection's own keysOf/evolve
 * in memory (no KV, no clock), then read the documents it left.
 */
import type { DomainEvent, EventOf, EventType, StoredEvent } from "../../../events/types.ts";
import type { Projection } from "../../../events/projection.ts";

const T0 = 1_700_000_000_000;

/** The event as the log would hand it back: `at` is T0 plus `atOffsetMs`. */
export function stored(e: DomainEvent, atOffsetMs = 0, position = 0): StoredEvent {
  return {
    ...e,
    at: T0 + atOffsetMs,
    stream: "test",
    streamPosition: position,
    position,
    prevHash: "0".repeat(64),
    hash: "1".repeat(64),
  };
}
export const AT0 = T0;

/** The documents a projection holds, by JSON of their key. */
export type Docs = Map<string, unknown>;

export function fold(p: Projection, events: StoredEvent[], docs: Docs = new Map()): Docs {
  for (const e of events) {
    for (const key of p.keysOf(e)) {
      const id = JSON.stringify(key);
      const next = p.evolve((docs.get(id) ?? null) as never, e, key);
      if (next === null) docs.delete(id);
      else docs.set(id, next);
    }
  }
  return docs;
}

/** given(events).when(event) -> the documents after it: the shape of every evolve test. */
export function given(p: Projection, events: StoredEvent[]) {
  const before = fold(p, events);
  return {
    when(e: StoredEvent) {
      const after = fold(p, [e], new Map(before));
      return {
        doc: (key: Deno.KvKey) => after.get(JSON.stringify(key)) ?? null,
        docs: after,
      };
    },
  };
}

const BUILD = {
  buildId: 7,
  keyId: "key1",
  purchaseId: "pur1",
  day: "2023-11-14",
  mint: "Mint111",
  seed: "seed",
  reference: "Ref111",
  payer: "Payer111",
  recipient: "Rcpt111",
  recipientTokenAccount: "Ata111",
  metadataAccount: "Meta111",
  name: "Name",
  symbol: "SYM",
  uri: "https://example.test/m/1.json",
  decimals: 6,
  supplyRaw: "1000000",
  revokeMint: false,
  revokeFreeze: true,
  immutableMetadata: false,
  feeLamports: "5000",
  feeUsd: 1,
  solUsd: 200,
  treasury: "Treasury111",
  blockhash: "Hash111",
  lastValidBlockHeight: 900,
  messageHash: "ab".repeat(32),
};

/** One plausible event of every type, for the checks that walk them all. */
const VIEW = {
  name: "Old",
  symbol: "OLD",
  uri: "https://example.com/old.json",
  updateAuthority: "Auth111",
  isMutable: true,
  mintAuthority: "Auth111",
  freezeAuthority: null,
};

export const SAMPLES: { [T in EventType]: EventOf<T> } = {
  AccessPaymentQuoted: {
    type: "AccessPaymentQuoted",
    v: 2,
    data: {
      purchaseId: "pur1",
      wallet: "Wallet111",
      currency: "SOL",
      amount: "1000",
      usd: 10,
      solUsd: 200,
      reference: "PRef111",
      treasury: "Treasury111",
      lastValidBlockHeight: 100,
      expiresAt: T0 + 300_000,
    },
  },
  AccessUnderpaid: {
    type: "AccessUnderpaid",
    v: 1,
    data: {
      purchaseId: "pur1",
      signature: "sigA",
      slot: 5,
      blockTime: 1_700_000_010,
      received: "400",
      late: false,
      solUsd: 200,
      shortfall: "600",
    },
  },
  AccessTopUpQuoted: {
    type: "AccessTopUpQuoted",
    v: 1,
    data: {
      purchaseId: "pur1",
      amount: "650",
      solUsd: 190,
      lastValidBlockHeight: 200,
      expiresAt: T0 + 900_000,
    },
  },
  AccessPurchased: {
    type: "AccessPurchased",
    v: 1,
    data: {
      purchaseId: "pur1",
      wallet: "Wallet111",
      currency: "SOL",
      amount: "1050",
      signature: "sigB",
      slot: 9,
    },
  },
  KeyIssued: {
    type: "KeyIssued",
    v: 1,
    data: { keyId: "key1", purchaseId: "pur1", wallet: "Wallet111", secretMac: "mac1" },
  },
  KeyRotated: {
    type: "KeyRotated",
    v: 1,
    data: { keyId: "key1", purchaseId: "pur1", secretMac: "mac2" },
  },
  KeyDeleted: { type: "KeyDeleted", v: 1, data: { keyId: "key1", purchaseId: "pur1" } },
  KeyBanned: { type: "KeyBanned", v: 1, data: { keyId: "key1", reason: "abuse" } },
  KeyBanLifted: { type: "KeyBanLifted", v: 1, data: { keyId: "key1" } },
  KeySuspended: { type: "KeySuspended", v: 1, data: { keyId: "key1", reason: "unverified" } },
  MetadataHosted: {
    type: "MetadataHosted",
    v: 1,
    data: {
      id: "meta1",
      keyId: "key1",
      purchaseId: "pur1",
      day: "2023-11-14",
      imageId: "img1",
      imageExt: "png",
      imageMime: "image/png",
      imageBytes: 1234,
      imageChunks: 1,
      newImage: true,
      json: '{"name":"Name"}',
    },
  },
  MetadataImageUnfetchable: {
    type: "MetadataImageUnfetchable",
    v: 1,
    data: { id: "meta2", keyId: "key1", purchaseId: "pur1", day: "2023-11-14", reason: "refused" },
  },
  TokenBuilt: { type: "TokenBuilt", v: 1, data: BUILD },
  TransactionSubmitted: {
    type: "TransactionSubmitted",
    v: 1,
    data: { buildId: 7, mint: "Mint111", signature: "sigT", via: "relay" },
  },
  CreationConfirmed: {
    type: "CreationConfirmed",
    v: 1,
    data: {
      buildId: 7,
      mint: "Mint111",
      signature: "sigT",
      slot: 42,
      blockTime: 1_700_000_100,
      feeLamportsSeen: "5000",
      supplyRaw: "1000000",
      decimalsSeen: 6,
      recipientSeen: "Rcpt111",
    },
  },
  CreationFailed: {
    type: "CreationFailed",
    v: 1,
    data: { buildId: 7, mint: "Mint111", signature: "sigT", reason: "custom program error" },
  },
  TransactionFailed: {
    type: "TransactionFailed",
    v: 1,
    data: {
      buildId: 7,
      mint: "Mint111",
      signature: "sigF",
      slot: 41,
      reason: "custom program error",
    },
  },
  CreationUnverified: {
    type: "CreationUnverified",
    v: 1,
    data: {
      buildId: 7,
      keyId: "key1",
      mint: "Mint111",
      signature: "sigT",
      slot: 42,
      blockTime: null,
      feeLamportsSeen: "5000",
      supplyRawSeen: "1",
      problems: ["supply short"],
    },
  },
  BuildExpired: {
    type: "BuildExpired",
    v: 1,
    data: { buildId: 7, mint: "Mint111", blockHeight: 1000 },
  },
  BuildRefreshed: {
    type: "BuildRefreshed",
    v: 1,
    data: {
      buildId: 7,
      mint: "Mint111",
      reference: "Ref111",
      blockhash: "Hash222",
      lastValidBlockHeight: 2000,
      messageHash: "msg222",
      feeLamports: "20000000",
      feeUsd: 2.99,
      solUsd: 150,
      feeQuote: "quoted",
    },
  },
  TokenUpdateBuilt: {
    type: "TokenUpdateBuilt",
    v: 1,
    data: {
      updateId: "0123456789abcdef0123456789abcdef",
      buildId: 7,
      keyId: "key1",
      purchaseId: "pur1",
      mint: "Mint111",
      tokenProgram: "spl-token",
      authority: "Auth111",
      changes: ["metadataUri"],
      before: VIEW,
      after: { ...VIEW, uri: "https://example.com/new.json" },
      blockhash: "Hash333",
      lastValidBlockHeight: 3000,
      messageHash: "msg333",
      unitLimit: 40000,
      microLamports: "0",
      feeLamports: "0",
      feeUsd: 0,
      solUsd: null,
      treasury: "Treasury111",
      reference: null,
      rentTopUpLamports: "0",
      totalLamports: "5000",
    },
  },
  TokenUpdateSubmitted: {
    type: "TokenUpdateSubmitted",
    v: 1,
    data: {
      updateId: "0123456789abcdef0123456789abcdef",
      buildId: 7,
      keyId: "key1",
      mint: "Mint111",
      signature: "Sig333",
      via: "relay",
    },
  },
  TokenUpdateLanded: {
    type: "TokenUpdateLanded",
    v: 1,
    data: {
      updateId: "0123456789abcdef0123456789abcdef",
      buildId: 7,
      keyId: "key1",
      mint: "Mint111",
      signature: "Sig333",
      slot: 300,
      blockTime: 1_700_000_100,
      feeLamportsSeen: "0",
      after: { ...VIEW, uri: "https://example.com/new.json" },
      set: { uri: "https://example.com/new.json" },
    },
  },
  TokenUpdateFailed: {
    type: "TokenUpdateFailed",
    v: 1,
    data: {
      updateId: "0123456789abcdef0123456789abcdef",
      buildId: 7,
      keyId: "key1",
      mint: "Mint111",
      signature: "Sig444",
      reason: "landed with an error",
    },
  },
  WebhookEndpointRegistered: {
    type: "WebhookEndpointRegistered",
    v: 1,
    data: {
      endpointId: "ep1",
      keyId: "key1",
      url: "https://hooks.example.test/x",
      eventTypes: ["token.confirmed"],
      description: null,
      secretSealed: "sealed",
    },
  },
  WebhookEndpointDeleted: {
    type: "WebhookEndpointDeleted",
    v: 1,
    data: { endpointId: "ep1", keyId: "key1" },
  },
  WebhookEndpointDisabled: {
    type: "WebhookEndpointDisabled",
    v: 1,
    data: { endpointId: "ep1", keyId: "key1", failingSince: T0, reason: "failing for 5 days" },
  },
  WebhookDeliveryScheduled: {
    type: "WebhookDeliveryScheduled",
    v: 1,
    data: {
      deliveryId: "del1",
      endpointId: "ep1",
      keyId: "key1",
      messageId: "msg_1",
      eventType: "token.confirmed",
      buildId: 7,
      payload: "{}",
      replayOf: null,
    },
  },
  WebhookDeliveryAttempted: {
    type: "WebhookDeliveryAttempted",
    v: 1,
    data: {
      deliveryId: "del1",
      endpointId: "ep1",
      attempt: 1,
      ok: false,
      httpStatus: 500,
      error: "HTTP 500",
      durationMs: 12,
      nextAttemptAt: T0 + 5_000,
    },
  },
  WebhookDeliveryAbandoned: {
    type: "WebhookDeliveryAbandoned",
    v: 1,
    data: { deliveryId: "del1", endpointId: "ep1", reason: "gave up" },
  },
};

/** A sample of `type`, its data changed by `patch`, stored at T0 + `atOffsetMs`. */
export function event<T extends EventType>(
  type: T,
  patch: Partial<EventOf<T>["data"]> = {},
  atOffsetMs = 0,
): StoredEvent {
  const base: DomainEvent = SAMPLES[type];
  return stored({ ...base, data: { ...base.data, ...patch } } as DomainEvent, atOffsetMs);
}
