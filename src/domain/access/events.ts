/** The events access commands emit (their shapes and versions live in events/types.ts). */
import type { EventOf } from "../../../events/types.ts";

export const ACCESS_EVENT_TYPES = [
  "AccessPaymentQuoted",
  "AccessUnderpaid",
  "AccessTopUpQuoted",
  "AccessPurchased",
  "KeyIssued",
  "KeyRotated",
  "KeyDeleted",
  "KeyBanned",
  "KeyBanLifted",
  "KeySuspended",
] as const;

export type AccessEvent = EventOf<(typeof ACCESS_EVENT_TYPES)[number]>;
