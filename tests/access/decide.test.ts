/**
 * decideAccess, given/when/then: given the events so far (folded by the real projections into
 * the purchase and key documents), when a command, then the events it decides or its rejection.
 * Pure: no KV, no clock.
 */
import { assertEquals } from "../support/assert.ts";
import type { StoredEvent } from "../../events/types.ts";
import { type AccessCommand, decideAccess } from "../../src/domain/access/decide.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { type PurchaseDoc, purchasesProjection } from "../../projections/purchases.ts";
import { AT0, event, fold, SAMPLES } from "../projections/support/events.ts";

function given(events: StoredEvent[]) {
  const purchase = fold(purchasesProjection, events).get(JSON.stringify(["pur1"])) ?? null;
  const key = fold(keysProjection, events).get(JSON.stringify(["key1"])) ?? null;
  return {
    when: (cmd: AccessCommand) =>
      decideAccess(cmd, {
        purchase: purchase as PurchaseDoc | null,
        key: key as KeyDoc | null,
      }),
  };
}

const types = (r: ReturnType<ReturnType<typeof given>["when"]>) =>
  Array.isArray(r) ? r.map((e) => e.type) : r.rejected;

const quoted = event("AccessPaymentQuoted");
const paid = event("AccessPurchased");
const issued = event("KeyIssued");
const wallet = "Wallet111";

const quote: AccessCommand = {
  type: "QuotePurchase",
  ...SAMPLES.AccessPaymentQuoted.data,
  expiresAt: AT0 + 300_000,
};
const payment = (received: string): AccessCommand => ({
  type: "RecordPayment",
  purchaseId: "pur1",
  signature: `sig-${received}`,
  slot: 3,
  // Inside the quote's 300 s.
  blockTime: Math.floor(AT0 / 1000) + 10,
  received,
  currentSolUsd: 200,
  stablecoinDecimals: 6,
});

Deno.test("QuotePurchase: given nothing, then AccessPaymentQuoted v2 with its expiry; given a quote, then refused", () => {
  const r = given([]).when(quote);
  assertEquals(Array.isArray(r) && r.map((e) => [e.type, e.v]), [["AccessPaymentQuoted", 2]]);
  assertEquals(types(given([quoted]).when(quote)), "invalid_request");
});

Deno.test("RecordPayment: given a quote, when the full amount lands in time, then AccessPurchased", () => {
  const r = given([quoted]).when(payment("1000"));
  assertEquals(types(r), ["AccessPurchased"]);
  assertEquals(Array.isArray(r) && r[0].type === "AccessPurchased" && r[0].data.amount, "1000");
});

Deno.test("RecordPayment: given a quote, when too little lands, then AccessUnderpaid naming the shortfall", () => {
  const r = given([quoted]).when(payment("400"));
  assertEquals(types(r), ["AccessUnderpaid"]);
  assertEquals(
    Array.isArray(r) && r[0].type === "AccessUnderpaid" && [r[0].data.shortfall, r[0].data.late],
    ["600", false],
  );
});

Deno.test("RecordPayment: given a paid purchase or a payment already counted, then nothing more; given none, not_found", () => {
  assertEquals(given([quoted, paid]).when(payment("1000")), []);
  assertEquals(
    given([quoted, event("AccessUnderpaid", { signature: "sig-400" })]).when(payment("400")),
    [],
  );
  assertEquals(types(given([]).when(payment("1000"))), "not_found");
});

Deno.test("QuoteTopUp: only for an underpaid purchase, of the caller's wallet, still owing what was priced", () => {
  const topUp = (owed: string, w = wallet): AccessCommand => ({
    type: "QuoteTopUp",
    purchaseId: "pur1",
    wallet: w,
    owed,
    amount: "650",
    solUsd: 190,
    lastValidBlockHeight: 200,
    expiresAt: AT0 + 900_000,
  });
  const underpaid = [quoted, event("AccessUnderpaid")];
  assertEquals(types(given(underpaid).when(topUp("600"))), ["AccessTopUpQuoted"]);
  assertEquals(types(given(underpaid).when(topUp("500"))), "invalid_request");
  assertEquals(types(given(underpaid).when(topUp("600", "SomeoneElse"))), "not_found");
  assertEquals(types(given([quoted]).when(topUp("1000"))), "invalid_request");
});

Deno.test("IssueKey: given a paid purchase, then KeyIssued; unpaid or with a key already, refused", () => {
  const issue: AccessCommand = {
    type: "IssueKey",
    purchaseId: "pur1",
    wallet,
    keyId: "key1",
    secretMac: "m",
  };
  assertEquals(types(given([quoted, paid]).when(issue)), ["KeyIssued"]);
  assertEquals(types(given([quoted]).when(issue)), "invalid_request");
  assertEquals(types(given([quoted, paid, issued]).when(issue)), "invalid_request");
  assertEquals(types(given([quoted, paid]).when({ ...issue, wallet: "SomeoneElse" })), "not_found");
});

Deno.test("RotateKey and DeleteKey: the owner's usable key only; a banned or suspended key is forbidden", () => {
  const rotate: AccessCommand = { type: "RotateKey", keyId: "key1", wallet, secretMac: "m2" };
  const del: AccessCommand = { type: "DeleteKey", keyId: "key1", wallet };
  const live = [quoted, paid, issued];
  assertEquals(types(given(live).when(rotate)), ["KeyRotated"]);
  assertEquals(types(given(live).when(del)), ["KeyDeleted"]);
  assertEquals(types(given([...live, event("KeyBanned")]).when(rotate)), "forbidden");
  assertEquals(types(given([...live, event("KeySuspended")]).when(del)), "forbidden");
  assertEquals(types(given([...live, event("KeyDeleted")]).when(rotate)), "not_found");
  assertEquals(types(given(live).when({ ...del, wallet: "SomeoneElse" })), "not_found");
});
