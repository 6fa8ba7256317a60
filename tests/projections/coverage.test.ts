/**
 * Every event type is read by some projection or ignored on purpose, and each projection's
 * declared `handles` is exactly what it folds.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { EVENT_TYPES } from "../../events/event-types.ts";
import type { EventType } from "../../events/types.ts";
import { allProjections, declaredProjections, IGNORED_EVENTS } from "../../projections/index.ts";
import type { DeclaredProjection } from "../../events/projection.ts";
import { SAMPLES, stored } from "./support/events.ts";

/** Event types that no projection handles and that are not on the ignored list. */
function unaccounted(
  projections: DeclaredProjection[],
  ignored: Partial<Record<EventType, string>>,
): EventType[] {
  const handled = new Set(projections.flatMap((p) => p.handles));
  return EVENT_TYPES.filter((t) => !handled.has(t) && !(t in ignored));
}

Deno.test("every event type is handled by a projection or on the ignored list", () => {
  assertEquals(unaccounted(allProjections, IGNORED_EVENTS), []);
});

Deno.test("a projection dropped from the registry leaves its events unaccounted, and the check says which", () => {
  const withoutWebhooks = allProjections.filter((p) => !p.name.startsWith("webhook"));
  assertEquals(unaccounted(withoutWebhooks, IGNORED_EVENTS), [
    "WebhookEndpointRegistered",
    "WebhookEndpointDeleted",
    "WebhookEndpointDisabled",
    "WebhookDeliveryScheduled",
    "WebhookDeliveryAttempted",
    "WebhookDeliveryAbandoned",
  ]);
  // An explicit ignore, with its reason, accounts for one.
  assertEquals(
    unaccounted(withoutWebhooks, { ...IGNORED_EVENTS, WebhookDeliveryAbandoned: "test" }).length,
    5,
  );
});

Deno.test("every ignored entry gives a reason and names a type no projection handles", () => {
  const handled = new Set(allProjections.flatMap((p) => p.handles));
  for (const [type, reason] of Object.entries(IGNORED_EVENTS)) {
    assert(reason && reason.trim().length > 0, `${type} is ignored without a reason`);
    assert(!handled.has(type as EventType), `${type} is ignored but handled`);
  }
});

Deno.test("each projection declares every event its keysOf answers to", async (t) => {
  // The folds as written: the registered wrapper would hide an undeclared event.
  for (const p of declaredProjections) {
    await t.step(p.name, () => {
      const declared = new Set(p.handles);
      for (const type of EVENT_TYPES) {
        const keys = p.keysOf(stored(SAMPLES[type]));
        if (declared.has(type)) continue;
        assertEquals(keys, [], `${p.name} folds ${type} without declaring it`);
      }
      assert(p.handles.length > 0, `${p.name} declares no events`);
    });
  }
});
