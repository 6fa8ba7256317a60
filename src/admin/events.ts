/**
 * The events admin commands emit, all on the key's purchase stream (their shapes and versions live
 * in events/types.ts). `KeySuspended` is also what a landing that tips a key over emits
 * (`decideSuspension`, run by the lifecycle in src/creation/).
 */
import type { EventOf } from "../../events/types.ts";

export const ADMIN_EVENT_TYPES = ["KeyBanned", "KeyBanLifted", "KeySuspended"] as const;

export type AdminEvent = EventOf<(typeof ADMIN_EVENT_TYPES)[number]>;
