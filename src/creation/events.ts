/**
 * The events lifecycle commands emit: on the build's stream, and a key's suspension on its
 * purchase's stream (their shapes and versions live in events/types.ts).
 */
import type { EventOf } from "../../events/types.ts";

export type CreationEvent = EventOf<
  | "TransactionSubmitted"
  | "CreationConfirmed"
  | "CreationFailed"
  | "TransactionFailed"
  | "CreationUnverified"
  | "BuildExpired"
  | "KeySuspended"
>;
