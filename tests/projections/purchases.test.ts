import { assertEquals } from "../support/assert.ts";
import {
  purchaseByReferenceProjection,
  type PurchaseDoc,
  purchasesProjection,
  walletPurchasesProjection,
} from "../../projections/purchases.ts";
import { event, given } from "./support/events.ts";

const quoted = event("AccessPaymentQuoted");
const doc = (history: ReturnType<typeof event>[], next: ReturnType<typeof event>) =>
  given(purchasesProjection, history).when(next).doc(["pur1"]) as PurchaseDoc | null;

Deno.test("purchase: given nothing, when quoted, then a quoted purchase owing the amount", () => {
  const d = doc([], quoted);
  assertEquals([d?.status, d?.owed, d?.received, d?.expiresAt], [
    "quoted",
    "1000",
    "0",
    quoted.at + 300_000,
  ]);
});

Deno.test("purchase: given a quote, when underpaid, then underpaid with the shortfall owed", () => {
  const d = doc([quoted], event("AccessUnderpaid"));
  assertEquals([d?.status, d?.received, d?.owed, d?.payments], ["underpaid", "400", "600", [
    "sigA",
  ]]);
});

Deno.test("purchase: given an underpayment, when a top-up is quoted, then the new quote is in force", () => {
  const topUp = event("AccessTopUpQuoted", {}, 1_000);
  const d = doc([quoted, event("AccessUnderpaid")], topUp);
  assertEquals([d?.owed, d?.quote.amount, d?.quote.quotedAt, d?.lastValidBlockHeight], [
    "650",
    "650",
    topUp.at,
    200,
  ]);
});

Deno.test("purchase: given a quote, when purchased, then paid with every payment kept", () => {
  const paid = event("AccessPurchased", {}, 2_000);
  const d = doc([quoted, event("AccessUnderpaid")], paid);
  assertEquals([d?.status, d?.owed, d?.paidAt, d?.payments], ["paid", "0", paid.at, [
    "sigA",
    "sigB",
  ]]);
});

Deno.test("purchase: given a paid purchase, when a key is issued then deleted, then none active", () => {
  const withKey = doc([quoted, event("AccessPurchased")], event("KeyIssued"));
  assertEquals([withKey?.activeKeyId, withKey?.keyIds], ["key1", ["key1"]]);
  const deleted = doc([quoted, event("AccessPurchased"), event("KeyIssued")], event("KeyDeleted"));
  assertEquals([deleted?.activeKeyId, deleted?.keyIds], [null, ["key1"]]);
});

Deno.test("wallet_purchase and purchase_by_reference: when quoted, then both indexes point at it", () => {
  assertEquals(
    given(walletPurchasesProjection, []).when(quoted).doc(["Wallet111", "pur1"]),
    { purchaseId: "pur1", at: quoted.at },
  );
  assertEquals(given(purchaseByReferenceProjection, []).when(quoted).doc(["PRef111"]), "pur1");
});
