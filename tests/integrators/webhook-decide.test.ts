/** The pure webhook decisions: which outcome sends which event, and the loopback setting's limits. */
import type { DomainEvent } from "../../events/types.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import type { WebhookEndpointDoc } from "../../projections/webhooks.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { RETRY_DELAYS_MS, scheduleOutcomeDeliveries } from "../../src/webhooks/decide.ts";
import { assert, assertEquals } from "../support/assert.ts";

const build = {
  buildId: 7,
  keyId: "k1",
  mint: "Mint1111111111111111111111111111111111111",
  status: "submitted",
  signature: "sig",
  feeLamports: "1000",
  feeVerified: false,
  feeLamportsSeen: null,
  supplyRaw: "10",
  supplyRawSeen: null,
  problems: [],
} as unknown as BuildDoc;

const endpoint = (id: string, eventTypes: WebhookEndpointDoc["eventTypes"], status = "enabled") =>
  ({ endpointId: id, keyId: "k1", eventTypes, status }) as WebhookEndpointDoc;

const base = { buildId: 7, mint: build.mint };
const outcomes: [DomainEvent, string, string][] = [
  [
    {
      type: "CreationConfirmed",
      v: 1,
      data: {
        ...base,
        signature: "sig",
        slot: 5,
        blockTime: 1,
        feeLamportsSeen: "1000",
        supplyRaw: "10",
      },
    },
    "token.confirmed",
    "confirmed",
  ],
  [
    {
      type: "CreationUnverified",
      v: 1,
      data: {
        ...base,
        keyId: "k1",
        signature: "sig",
        slot: 5,
        blockTime: 1,
        feeLamportsSeen: "0",
        supplyRawSeen: "10",
        problems: ["fee missing"],
      },
    },
    "token.unverified",
    "unverified",
  ],
  [
    { type: "CreationFailed", v: 1, data: { ...base, signature: "sig", reason: "custom error" } },
    "token.failed",
    "failed",
  ],
  [{ type: "BuildExpired", v: 1, data: { ...base, blockHeight: 99 } }, "token.expired", "expired"],
];

Deno.test("each final outcome schedules its event type, with the status after the event, to the endpoints that asked for it", () => {
  for (const [event, type, status] of outcomes) {
    const scheduled = scheduleOutcomeDeliveries(build, [event], [
      endpoint("we_all", ["token.confirmed", "token.unverified", "token.failed", "token.expired"]),
      endpoint("we_only", [type as "token.failed"]),
      endpoint("we_other", [type === "token.failed" ? "token.expired" : "token.failed"]),
      endpoint("we_off", [type as "token.failed"], "disabled"),
    ], Date.UTC(2031, 0, 1));
    assertEquals(scheduled.map((s) => s.data.endpointId), ["we_all", "we_only"], type);
    const body = JSON.parse(scheduled[0].data.payload);
    assertEquals([body.type, body.data.status, body.data.buildId], [type, status, 7]);
    // The integrator sees who paid and signed: an unverified landing's payer is refused builds.
    assertEquals(body.data.payer, build.payer);
    assertEquals(body.timestamp, "2031-01-01T00:00:00.000Z");
    assertEquals(scheduled[0].data.messageId, scheduled[1].data.messageId);
  }
  // A submission is no outcome.
  assertEquals(
    scheduleOutcomeDeliveries(
      build,
      [{
        type: "TransactionSubmitted",
        v: 1,
        data: { ...base, signature: "s", via: "relay" },
      }],
      [endpoint("we_all", ["token.confirmed"])],
      0,
    ),
    [],
  );
});

Deno.test("a refresh sends token.refreshed with the new message; after it, an outcome's webhook-id carries the refresh count", () => {
  const expiredBuild = { ...build, status: "expired" } as BuildDoc;
  const refreshed: DomainEvent = {
    type: "BuildRefreshed",
    v: 1,
    data: {
      ...base,
      reference: "Ref11111111111111111111111111111111111111111",
      blockhash: "Hash1111111111111111111111111111111111111111",
      lastValidBlockHeight: 321,
      messageHash: "ab",
      feeLamports: "1200",
      feeUsd: 2.99,
      solUsd: 120,
      feeQuote: "repriced",
    },
  };
  const all = endpoint("we_all", ["token.expired", "token.refreshed"]);
  const [r] = scheduleOutcomeDeliveries(expiredBuild, [refreshed], [all], 0);
  assertEquals([r.data.eventType, r.data.messageId], ["token.refreshed", "msg_7_refreshed_1"]);
  const body = JSON.parse(r.data.payload);
  assertEquals([body.data.status, body.data.refreshes, body.data.fee.lamports], [
    "built",
    1,
    "1200",
  ]);
  assertEquals(body.data.refresh, {
    blockhash: "Hash1111111111111111111111111111111111111111",
    lastValidBlockHeight: 321,
    feeQuote: "repriced",
  });
  // The same build expiring again is another outcome, not a copy of the first expiry.
  const again = { ...build, refreshes: 1 } as BuildDoc;
  const expired: DomainEvent = { type: "BuildExpired", v: 1, data: { ...base, blockHeight: 400 } };
  const [e] = scheduleOutcomeDeliveries(again, [expired], [all], 0);
  assertEquals(e.data.messageId, "msg_7_expired_1");
  assertEquals(
    scheduleOutcomeDeliveries(build, [expired], [all], 0)[0].data.messageId,
    "msg_7_expired",
  );
  // Only endpoints that asked for it get token.refreshed.
  assertEquals(
    scheduleOutcomeDeliveries(expiredBuild, [refreshed], [endpoint("we_x", ["token.expired"])], 0),
    [],
  );
});

Deno.test("the retry schedule spans at least 24 h", () => {
  assert(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) >= 24 * 3_600_000);
  for (let i = 1; i < RETRY_DELAYS_MS.length; i++) {
    assert(RETRY_DELAYS_MS[i] >= RETRY_DELAYS_MS[i - 1], "pauses never shrink");
  }
});

Deno.test("WEBHOOK_ALLOW_LOOPBACK: off by default, on locally when asked, refused in deploy mode", () => {
  assertEquals(loadConfig({}).webhooks.allowLoopback, false);
  assertEquals(loadConfig({ WEBHOOK_ALLOW_LOOPBACK: "true" }).webhooks.allowLoopback, true);
  let error: unknown;
  try {
    loadConfig({
      DEPLOY_MODE: "1",
      WEBHOOK_ALLOW_LOOPBACK: "true",
      TREASURY_ADDRESS: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      KEY_PEPPER: "x".repeat(32),
      SOLANA_RPC_URL: "https://rpc.example.com",
      PUBLIC_BASE_URL: "https://api.example.com",
    });
  } catch (e) {
    error = e;
  }
  assert(error instanceof ConfigError);
  assert(error.problems.some((p) => p.startsWith("WEBHOOK_ALLOW_LOOPBACK")));
});
