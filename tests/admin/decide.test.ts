/**
 * decideAdmin, given/when/then: given the events so far (folded by the real `key` projection),
 * when an operator's command, then the events it decides or its rejection. Pure: no KV, no clock
 * but the `now` passed in. The runner and the HTTP/CLI paths are covered in admin-http.test.ts and
 * cli.test.ts.
 */
import { assertEquals } from "../support/assert.ts";
import type { StoredEvent } from "../../events/types.ts";
import {
  type AdminCommand,
  adminStream,
  decideAdmin,
  decideNames,
  type NamesCommand,
} from "../../src/admin/decide.ts";
import { ADMIN_EVENT_TYPES } from "../../src/admin/events.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { AT0, event, fold } from "../projections/support/events.ts";

function given(events: StoredEvent[]) {
  const key = (fold(keysProjection, events).get(JSON.stringify(["key1"])) ?? null) as KeyDoc | null;
  return {
    key,
    when: (cmd: AdminCommand) => decideAdmin(cmd, { key }, AT0),
  };
}

const types = (r: ReturnType<ReturnType<typeof given>["when"]>) =>
  Array.isArray(r) ? r.map((e) => e.type) : r.rejected;

const live = [event("AccessPaymentQuoted"), event("AccessPurchased"), event("KeyIssued")];
const ban: AdminCommand = { type: "BanKey", keyId: "key1", reason: "abuse" };
const lift: AdminCommand = { type: "LiftBan", keyId: "key1" };
const suspend: AdminCommand = { type: "SuspendKey", keyId: "key1", reason: "unverified" };

Deno.test("BanKey, LiftBan, SuspendKey: idempotent, and not_found for an unknown key", () => {
  assertEquals(types(given(live).when(ban)), ["KeyBanned"]);
  assertEquals(given([...live, event("KeyBanned")]).when(ban), []);
  assertEquals(given(live).when(lift), []);
  assertEquals(types(given([...live, event("KeySuspended")]).when(lift)), ["KeyBanLifted"]);
  assertEquals(types(given(live).when(suspend)), ["KeySuspended"]);
  // A banned key is not also suspended: the ban already stops it.
  assertEquals(given([...live, event("KeyBanned")]).when(suspend), []);
  for (const cmd of [ban, lift, suspend]) assertEquals(types(given([]).when(cmd)), "not_found");
});

Deno.test("BanKey: given an active key, when banned, then KeyBanned with the operator's reason", () => {
  assertEquals(given(live).when({ ...ban, reason: "phishing mints" }), [
    { type: "KeyBanned", v: 1, data: { keyId: "key1", reason: "phishing mints" } },
  ]);
});

Deno.test("BanKey: given a suspended key, when banned, then KeyBanned too", () => {
  assertEquals(types(given([...live, event("KeySuspended")]).when(ban)), ["KeyBanned"]);
});

Deno.test("LiftBan: given a banned key, when lifted, then KeyBanLifted; given it lifted, then nothing", () => {
  const banned = [...live, event("KeyBanned")];
  assertEquals(given(banned).when(lift), [
    { type: "KeyBanLifted", v: 1, data: { keyId: "key1" } },
  ]);
  assertEquals(given([...banned, event("KeyBanLifted")]).when(lift), []);
});

Deno.test("SuspendKey: given a lifted suspension, when suspended again, then KeySuspended", () => {
  const lifted = [...live, event("KeySuspended"), event("KeyBanLifted")];
  assertEquals(types(given(lifted).when(suspend)), ["KeySuspended"]);
  assertEquals(given([...live, event("KeySuspended")]).when(suspend), []);
});

Deno.test("a deleted key can still be banned (a ban is a record, not only a lock)", () => {
  assertEquals(types(given([...live, event("KeyDeleted")]).when(ban)), ["KeyBanned"]);
});

Deno.test("the decision is the same whatever the clock: no decision reads the time", () => {
  const { key } = given(live);
  for (const cmd of [ban, lift, suspend]) {
    assertEquals(decideAdmin(cmd, { key }, 0), decideAdmin(cmd, { key }, AT0 + 86_400_000));
  }
});

Deno.test("events go to the key's purchase stream, and only admin's event types are emitted", () => {
  const { key } = given(live);
  assertEquals(adminStream(ban, { key }), "purchase-pur1");
  for (const cmd of [ban, suspend]) {
    const r = decideAdmin(cmd, { key }, AT0);
    for (const e of Array.isArray(r) ? r : []) {
      assertEquals((ADMIN_EVENT_TYPES as readonly string[]).includes(e.type), true);
    }
  }
});

// The well-known-names list: given the stored list (or none) and the configured one, when an
// operator's command, then the list that is stored next (null: the configured one again).
const configured = ["SOL", "USDC"];
const names = (stored: string[] | null) => ({
  when: (cmd: NamesCommand) =>
    decideNames(cmd, {
      stored: stored && { names: stored, updatedAt: AT0 - 1 },
      configured,
    }, AT0),
});

Deno.test("SetNames: given any list, when set, then the normalized list stamped with now", () => {
  assertEquals(names(["Acme"]).when({ type: "SetNames", names: [" BONK", "bonk", "Moon Cat"] }), {
    stored: { names: ["BONK", "Moon Cat"], updatedAt: AT0 },
  });
});

Deno.test("EditNames: given no stored list, then the edit applies to the configured one; removal by skeleton", () => {
  assertEquals(names(null).when({ type: "EditNames", add: ["BONK"], remove: ["usdc"] }), {
    stored: { names: ["SOL", "BONK"], updatedAt: AT0 },
  });
  assertEquals(names(["Acme", "USDC"]).when({ type: "EditNames", remove: ["acme"] }), {
    stored: { names: ["USDC"], updatedAt: AT0 },
  });
});

Deno.test("SetNames, EditNames: a bad entry is a typed rejection naming every bad field", () => {
  const r = names(null).when({ type: "SetNames", names: ["", 3] });
  assertEquals(r, {
    rejected: "invalid_request",
    message: "Request is invalid",
    fields: { "names.0": "must be 1 to 64 characters", "names.1": "must be a string" },
  });
  const e = names(null).when({ type: "EditNames", add: ["..."] });
  assertEquals("rejected" in e && e.fields, { "names.0": "has no letters or digits to compare" });
});

Deno.test("ResetNames: given a stored list, then none (the configured list is in force)", () => {
  assertEquals(names(["Acme"]).when({ type: "ResetNames" }), { stored: null });
  assertEquals(names(null).when({ type: "ResetNames" }), { stored: null });
});
