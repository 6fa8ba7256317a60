/**
 * The command-level decisions the runner calls, given/when/then: given the read models folded from
 * events by the real projections, when a command, then its events or its rejection. Pure: no KV.
 */
import { assertEquals } from "../support/assert.ts";
import type { StoredEvent } from "../../events/types.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import {
  type WebhookDeliveryDoc,
  webhookDeliveryProjection,
  type WebhookEndpointDoc,
  webhookEndpointProjection,
} from "../../projections/webhooks.ts";
import {
  decideAbandon,
  decideRecordAttempt,
  decideRegister,
  decideReplay,
  retryInMs,
} from "../../src/webhooks/commands.ts";
import { MAX_ENDPOINTS_PER_KEY, RETRY_DELAYS_MS } from "../../src/webhooks/decide.ts";
import { decideBuildCall } from "../../src/tokens/decide.ts";
import { decideHost, decideUnfetchable } from "../../src/metadata/decide.ts";
import { AT0, event, fold, SAMPLES } from "../projections/support/events.ts";

const doc = <D>(p: { name: string }, events: StoredEvent[], key: Deno.KvKey) =>
  (fold(p as never, events).get(JSON.stringify(key)) ?? null) as D | null;

const registered = event("WebhookEndpointRegistered");
const scheduled = event("WebhookDeliveryScheduled");
const issued = event("KeyIssued");
const endpointAfter = (events: StoredEvent[]) =>
  doc<WebhookEndpointDoc>(webhookEndpointProjection, events, ["ep1"]);
const deliveryAfter = (events: StoredEvent[]) =>
  doc<WebhookDeliveryDoc>(webhookDeliveryProjection, events, ["del1"]);
const keyAfter = (events: StoredEvent[]) => doc<KeyDoc>(keysProjection, events, ["key1"]);

Deno.test("webhooks: given the key's endpoints at the cap, when one more is registered, then a 400 on url", () => {
  const cmd = { ...SAMPLES.WebhookEndpointRegistered.data, endpointId: "ep2" };
  const full = Array.from({ length: MAX_ENDPOINTS_PER_KEY }, (_, i) => `ep${i}`);
  const r = decideRegister(cmd, { endpointIds: full });
  assertEquals(!Array.isArray(r) && [r.rejected, Object.keys(r.fields ?? {})], [
    "invalid_request",
    ["url"],
  ]);
  const ok = decideRegister(cmd, { endpointIds: full.slice(1) });
  assertEquals(Array.isArray(ok) && ok.map((e) => e.data.endpointId), ["ep2"]);
});

Deno.test("webhooks: given a delivery, when replayed by another key, to a disabled endpoint, or for another endpoint's delivery, then refused; else the same message scheduled again", () => {
  const given = [registered, scheduled];
  const state = { original: deliveryAfter(given), endpoint: endpointAfter(given) };
  const cmd = { deliveryId: "del2", originalId: "del1", endpointId: "ep1", keyId: "key1" };
  const kind = (r: ReturnType<typeof decideReplay>) =>
    Array.isArray(r) ? r.map((e) => [e.data.messageId, e.data.replayOf]) : r.rejected;

  assertEquals(kind(decideReplay({ ...cmd, keyId: "key2" }, state)), "not_found");
  assertEquals(
    kind(decideReplay({ ...cmd, originalId: "nope" }, { ...state, original: null })),
    "not_found",
  );
  const disabled = [...given, event("WebhookEndpointDisabled")];
  assertEquals(
    kind(
      decideReplay(cmd, { original: deliveryAfter(disabled), endpoint: endpointAfter(disabled) }),
    ),
    "invalid_request",
  );
  assertEquals(kind(decideReplay(cmd, state)), [["msg_1", "del1"]]);
});

Deno.test("webhooks: an attempt is recorded only while the delivery awaits exactly it; a failure asks for the scheduled retry", () => {
  const given = [registered, scheduled];
  const state = { delivery: deliveryAfter(given), endpoint: endpointAfter(given) };
  const failed = { ok: false, httpStatus: 500, error: "HTTP 500", durationMs: 3 };
  const now = AT0 + 1000;

  const first = decideRecordAttempt({ deliveryId: "del1", attempt: 1, result: failed }, state, now);
  assertEquals(first.map((e) => e.type), ["WebhookDeliveryAttempted"]);
  assertEquals(retryInMs(first, now), RETRY_DELAYS_MS[0]);
  // A redelivered message for an attempt not due (or already recorded) changes nothing.
  assertEquals(
    decideRecordAttempt({ deliveryId: "del1", attempt: 2, result: failed }, state, now),
    [],
  );
  assertEquals(decideAbandon({ deliveryId: "del1", attempt: 2, reason: "x" }, state), []);
  assertEquals(
    decideAbandon({ deliveryId: "del1", attempt: 1, reason: "endpoint deleted" }, state)
      .map((e) => e.data.reason),
    ["endpoint deleted"],
  );
  const delivered = decideRecordAttempt(
    {
      deliveryId: "del1",
      attempt: 1,
      result: { ...failed, ok: true, httpStatus: 200, error: null },
    },
    state,
    now,
  );
  assertEquals(retryInMs(delivered, now), null);
});

Deno.test("tokens and metadata: given the key rotated while the call was under way, when it commits, then unauthorized and no event", () => {
  const rotated = [issued, event("KeyRotated")];
  const authenticated = { secretMac: SAMPLES.KeyIssued.data.secretMac };
  const build = decideBuildCall({
    keyId: "key1",
    purchaseId: "pur1",
    authenticated,
    now: AT0,
    tokensPerDay: 5,
    conduct: { refusePayerAfter: 1, keyWalletTolerated: 3, share: 0.5, minPayers: 10 },
    draft: {} as never,
  }, { key: keyAfter(rotated), usage: null, lastBuildId: 3, payer: null });
  assertEquals(!Array.isArray(build) && build.rejected, "unauthorized");
  const fine = decideBuildCall({
    keyId: "key1",
    purchaseId: "pur1",
    authenticated,
    now: AT0,
    tokensPerDay: 5,
    conduct: { refusePayerAfter: 1, keyWalletTolerated: 3, share: 0.5, minPayers: 10 },
    draft: {} as never,
  }, { key: keyAfter([issued]), usage: null, lastBuildId: 3, payer: null });
  assertEquals(Array.isArray(fine) && fine.map((e) => e.data.buildId), [4]);

  const host = {
    id: "m1",
    keyId: "key1",
    purchaseId: "pur1",
    authenticated,
    now: AT0,
    day: "2023-11-14",
    image: { imageId: "i", ext: "png" as const, mime: "image/png", bytes: 1, chunks: 1 },
    json: "{}",
    limits: { metadataPerDay: 5, hostedItemsPerKey: 5 },
  };
  const none = { usage: null, hostedCount: null, image: null };
  const refused = decideHost(host, { ...none, key: keyAfter(rotated) });
  assertEquals(!Array.isArray(refused) && refused.rejected, "unauthorized");
  assertEquals(
    (decideHost(host, { ...none, key: keyAfter([issued]) }) as { type: string }[]).map((e) =>
      e.type
    ),
    ["MetadataHosted"],
  );
  assertEquals(
    decideUnfetchable({ ...host, reason: "r" }, { usage: null, key: keyAfter(rotated) }),
    [],
  );
  assertEquals(
    decideUnfetchable({ ...host, reason: "r" }, { usage: null, key: keyAfter([issued]) }).map((e) =>
      e.type
    ),
    ["MetadataImageUnfetchable"],
  );
});
