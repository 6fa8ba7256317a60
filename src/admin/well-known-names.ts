/**
 * The well-known-names list the token build refuses to impersonate. Configuration
 * (WELL_KNOWN_NAMES, else the built-in list) is the default; an operator's edit is stored in KV
 * and overrides it until reset, so the list can change without a redeploy. The changes are
 * decided in decide.ts (`decideNames`); this file reads the list and writes the decisions.
 */
import type { Config } from "../config.ts";
import { isRejection } from "../kernel/rejection.ts";
import { type WellKnownMatcher, wellKnownMatcher } from "../tokens/well-known-names.ts";
import { checkNames, decideNames, type NamesCommand, type StoredNames } from "./decide.ts";

export const WELL_KNOWN_NAMES_KEY: Deno.KvKey = ["admin", "well_known_names"];

export interface NamesSource {
  kv: Deno.Kv;
  config: Pick<Config, "wellKnownNames">;
}

export interface CurrentNames {
  names: string[];
  /** "kv": an operator's list is in force; "config": the configured default. */
  source: "kv" | "config";
  updatedAt: number | null;
}

export async function readWellKnownNames(s: NamesSource): Promise<CurrentNames> {
  const stored = (await s.kv.get<StoredNames>(WELL_KNOWN_NAMES_KEY)).value;
  return stored
    ? { names: stored.names, source: "kv", updatedAt: stored.updatedAt }
    : { names: s.config.wellKnownNames, source: "config", updatedAt: null };
}

/** The list in force now: the operator's, or the configured one. One strong KV read. */
export async function currentWellKnownNames(s: NamesSource): Promise<string[]> {
  return (await readWellKnownNames(s)).names;
}

const matchers = new WeakMap<
  Deno.Kv,
  { stamp: string | null; base: readonly string[]; matcher: WellKnownMatcher }
>();

/**
 * A matcher over the list in force, rebuilt only when the stored list changed (its versionstamp
 * moved), so the build path pays one KV read and no re-folding per request.
 */
export async function currentWellKnownMatcher(s: NamesSource): Promise<WellKnownMatcher> {
  const entry = await s.kv.get<StoredNames>(WELL_KNOWN_NAMES_KEY);
  const cached = matchers.get(s.kv);
  const base = s.config.wellKnownNames;
  if (cached && cached.stamp === entry.versionstamp && cached.base === base) return cached.matcher;
  const matcher = wellKnownMatcher(entry.value?.names ?? base);
  matchers.set(s.kv, { stamp: entry.versionstamp, base, matcher });
  return matcher;
}

export class NamesError extends Error {
  constructor(readonly problems: Record<string, string>) {
    super(Object.entries(problems).map(([k, v]) => `${k}: ${v}`).join("; "));
  }
}

/** Trims, drops exact and look-alike duplicates (same skeleton), and checks the caps. */
export function normalizeNames(names: unknown[]): string[] {
  const checked = checkNames(names);
  if (isRejection(checked)) throw new NamesError(checked.fields);
  return checked;
}

/**
 * Runs a names command: reads the stored list, decides, and writes the decision guarded by the
 * versionstamp it read, so two operators editing at once both land (the loser decides again on
 * the winner's list). A rejected list throws `NamesError` and changes nothing.
 */
export async function runNamesCommand(
  s: NamesSource & { clock?: () => number },
  cmd: NamesCommand,
): Promise<CurrentNames> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const entry = await s.kv.get<StoredNames>(WELL_KNOWN_NAMES_KEY);
    const state = { stored: entry.value, configured: s.config.wellKnownNames };
    const decided = decideNames(cmd, state, (s.clock ?? Date.now)());
    if (isRejection(decided)) throw new NamesError(decided.fields);
    const { stored } = decided;
    const write = s.kv.atomic().check(entry);
    const res =
      await (stored ? write.set(WELL_KNOWN_NAMES_KEY, stored) : write.delete(WELL_KNOWN_NAMES_KEY))
        .commit();
    if (!res.ok) continue;
    return stored
      ? { ...stored, source: "kv" }
      : { names: s.config.wellKnownNames, source: "config", updatedAt: null };
  }
  throw new Error("the well-known-names list is being edited concurrently; retry");
}

/** Replaces the list. */
export const setWellKnownNames = (
  s: NamesSource & { clock?: () => number },
  names: unknown[],
): Promise<CurrentNames> => runNamesCommand(s, { type: "SetNames", names });

/** Adds and removes names against the list in force (the configured one on the first edit). */
export const editWellKnownNames = (
  s: NamesSource & { clock?: () => number },
  edit: { add?: unknown[]; remove?: unknown[] },
): Promise<CurrentNames> => runNamesCommand(s, { type: "EditNames", ...edit });

/** Drops the operator's list: the configured one is in force again. */
export const resetWellKnownNames = (s: NamesSource): Promise<CurrentNames> =>
  runNamesCommand(s, { type: "ResetNames" });
