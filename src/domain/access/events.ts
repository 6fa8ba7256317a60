/**
 * The events access commands emit (their shapes and versions live in events/types.ts). Bans, lifts
 * and suspensions of a key are the operator's: src/admin/events.ts.
 */
import type { EventOf } from "../../../events/types.ts";

export const ACCESS_EVENT_TYPES = [
  "AccessPaymentQuoted",
  "AccessUnderpaid",
  "AccessTopUpQuoted",
  "AccessPurchased",
  "KeyIssued",
  "KeyRotated",
  "KeyDeleted",
] as const;

export type AccessEvent = EventOf<(typeof ACCESS_EVENT_TYPES)[number]>;
