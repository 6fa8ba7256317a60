/**
 * The events access commands emit (their shapes and versions live in events/types.ts): the
 * purchase's, and a key's issue, rotation and deletion. Bans, lifts and suspensions of a key are
 * the operator's: src/admin/events.ts.
 */
import type { EventOf } from "../../../events/types.ts";
import type { PURCHASE_EVENT_TYPES } from "../../../events/event-types.ts";

type AccessEventType =
  | (typeof PURCHASE_EVENT_TYPES)[number]
  | "KeyIssued"
  | "KeyRotated"
  | "KeyDeleted";

export type AccessEvent = EventOf<AccessEventType>;
