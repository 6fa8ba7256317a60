/**
 * Operator decisions on a key, pure: the command, the key as its projection holds it, and the
 * clock passed in (no decision here depends on the time yet; the runner gives every decide the
 * same shape). Each is idempotent: banning a banned key, or lifting a usable one, decides nothing,
 * so a retried request or a second operator changes nothing twice.
 */
import type { KeyDoc } from "../../projections/keys.ts";
import { reject, type Rejection } from "../domain/rejection.ts";
import type { AdminEvent } from "./events.ts";
import { keyStream } from "./suspension.ts";

export type AdminCommand =
  | { type: "BanKey"; keyId: string; reason: string }
  /** Lifts a ban or a suspension. */
  | { type: "LiftBan"; keyId: string }
  | { type: "SuspendKey"; keyId: string; reason: string };

export interface AdminState {
  /** The key the command names (`key` projection), null when there is none. */
  key: KeyDoc | null;
}

export function decideAdmin(
  cmd: AdminCommand,
  { key }: AdminState,
  _now: number,
): AdminEvent[] | Rejection {
  if (!key) return reject("not_found", "key not found");
  switch (cmd.type) {
    case "BanKey":
      if (key.banned) return [];
      return [{ type: "KeyBanned", v: 1, data: { keyId: cmd.keyId, reason: cmd.reason } }];
    case "LiftBan":
      if (!key.banned && !key.suspended) return [];
      return [{ type: "KeyBanLifted", v: 1, data: { keyId: cmd.keyId } }];
    case "SuspendKey":
      // A banned key is not also suspended: the ban already stops it.
      if (key.suspended || key.banned) return [];
      return [{ type: "KeySuspended", v: 1, data: { keyId: cmd.keyId, reason: cmd.reason } }];
  }
}

/** A key's events live on its purchase's stream (as in src/domain/access). */
export const adminStream = (_cmd: AdminCommand, { key }: AdminState): string => keyStream(key!);
