import { assertEquals } from "../support/assert.ts";
import { type KeyDoc, keysProjection, keyStatus } from "../../projections/keys.ts";
import { event, given } from "./support/events.ts";

const issued = event("KeyIssued", {}, 0);
const key = ["key1"];
const docAfter = (history: ReturnType<typeof event>[], next: ReturnType<typeof event>) =>
  given(keysProjection, history).when(next).doc(key) as KeyDoc | null;

Deno.test("key: given nothing, when KeyIssued, then an active key with its mac", () => {
  const doc = docAfter([], issued);
  assertEquals(doc?.secretMac, "mac1");
  assertEquals(doc && keyStatus(doc), "active");
  assertEquals(doc?.createdAt, issued.at);
});

Deno.test("key: given an issued key, when KeyRotated, then the new mac and when", () => {
  const rotated = event("KeyRotated", {}, 5_000);
  const doc = docAfter([issued], rotated);
  assertEquals([doc?.secretMac, doc?.rotatedAt], ["mac2", rotated.at]);
});

Deno.test("key: given an issued key, when banned, suspended, lifted or deleted, then its status", () => {
  assertEquals(keyStatus(docAfter([issued], event("KeyBanned"))!), "banned");
  assertEquals(keyStatus(docAfter([issued], event("KeySuspended"))!), "suspended");
  const lifted = docAfter(
    [issued, event("KeyBanned"), event("KeySuspended")],
    event("KeyBanLifted"),
  );
  assertEquals([lifted?.banned, lifted?.suspended], [null, null]);
  assertEquals(keyStatus(docAfter([issued], event("KeyDeleted"))!), "deleted");
});

Deno.test("key: given an issued key, when CreationUnverified names it, then the count rises", () => {
  const doc = docAfter([issued, event("CreationUnverified")], event("CreationUnverified"));
  assertEquals(doc?.unverifiedCount, 2);
});

Deno.test("key: given no key, when KeyRotated, then still no key", () => {
  assertEquals(docAfter([], event("KeyRotated")), null);
});
