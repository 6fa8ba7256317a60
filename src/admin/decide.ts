/**
 * Operator decisions, pure: the command, the state its read model holds, and the clock passed in
 * (only the names list's `updatedAt` reads it). The key commands are idempotent: banning a banned
 * key, or lifting a usable one, decides nothing, so a retried request or a second operator
 * changes nothing twice.
 */
import type { KeyDoc } from "../../projections/keys.ts";
import { isRejection, reject, type Rejection } from "../kernel/rejection.ts";
import { textProblem } from "../domain/text-rules.ts";
import { skeleton } from "../tokens/well-known-names.ts";
import type { AdminEvent } from "./events.ts";

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
/** The stream a key's access events belong to (the purchase's, as in src/domain/access). */
export const keyStream = (key: KeyDoc) => `purchase-${key.purchaseId}`;

export const adminStream = (_cmd: AdminCommand, { key }: AdminState): string => keyStream(key!);

/**
 * The operator's well-known-names list (the names a token build refuses to impersonate) is a
 * setting, not an event: it is kept in KV beside the log and overrides the configured list until
 * reset. Its changes are decided here, purely, like the key commands; src/admin/well-known-names.ts
 * writes the decision.
 */
export type NamesCommand =
  | { type: "SetNames"; names: unknown[] }
  /** Removal matches by skeleton, so "usdc" removes "USDC". */
  | { type: "EditNames"; add?: unknown[]; remove?: unknown[] }
  | { type: "ResetNames" };

export interface StoredNames {
  names: string[];
  updatedAt: number;
}

export interface NamesState {
  /** The operator's list, null when the configured one is in force. */
  stored: StoredNames | null;
  configured: readonly string[];
}

/**
 * Caps that keep the stored list under KV's 64 KiB value limit. KV serializes a string in at most
 * two bytes a UTF-16 unit, so the total length is what bounds the size: 1000 names of 64 CJK
 * characters alone would be 128 KB.
 */
export const MAX_NAMES = 1000;
export const MAX_NAME_LENGTH = 64;
export const MAX_TOTAL_LENGTH = 30_000;

/** A rejected list: every bad entry by its field (`names.3`), or `names` for the whole list. */
export type NamesRejection = Rejection & { fields: Record<string, string> };

/** Trims, drops exact and look-alike duplicates (same skeleton), and checks the caps. */
export function checkNames(names: unknown[]): string[] | NamesRejection {
  const problems: Record<string, string> = {};
  const out: string[] = [];
  const seen = new Set<string>();
  names.forEach((raw, i) => {
    if (typeof raw !== "string") return void (problems[`names.${i}`] = "must be a string");
    const n = raw.trim();
    if (n.length === 0 || n.length > MAX_NAME_LENGTH) {
      return void (problems[`names.${i}`] = `must be 1 to ${MAX_NAME_LENGTH} characters`);
    }
    // The operator's names obey the same text rules as the names they guard against.
    const problem = textProblem(n, "name");
    if (problem) return void (problems[`names.${i}`] = problem);
    const k = skeleton(n);
    if (!k) return void (problems[`names.${i}`] = "has no letters or digits to compare");
    if (seen.has(k)) return;
    seen.add(k);
    out.push(n);
  });
  if (out.length > MAX_NAMES) problems.names = `at most ${MAX_NAMES} names`;
  const total = out.reduce((sum, n) => sum + n.length, 0);
  if (total > MAX_TOTAL_LENGTH) {
    problems.names = `at most ${MAX_TOTAL_LENGTH} characters in all (now ${total})`;
  }
  if (Object.keys(problems).length) {
    return { ...reject("invalid_request", "Request is invalid", problems), fields: problems };
  }
  return out;
}

/** The operator's list after the command (null: dropped, the configured one is in force). */
export function decideNames(
  cmd: NamesCommand,
  s: NamesState,
  now: number,
): { stored: StoredNames | null } | NamesRejection {
  switch (cmd.type) {
    case "SetNames": {
      const names = checkNames(cmd.names);
      return isRejection(names) ? names : { stored: { names, updatedAt: now } };
    }
    case "EditNames": {
      const remove = checkNames(cmd.remove ?? []);
      if (isRejection(remove)) return remove;
      const add = checkNames(cmd.add ?? []);
      if (isRejection(add)) return add;
      const gone = remove.map(skeleton);
      // Edits apply to the list in force: the configured one on the first edit.
      const kept = (s.stored?.names ?? s.configured).filter((n) => !gone.includes(skeleton(n)));
      const names = checkNames([...kept, ...add]);
      return isRejection(names) ? names : { stored: { names, updatedAt: now } };
    }
    case "ResetNames":
      return { stored: null };
  }
}
