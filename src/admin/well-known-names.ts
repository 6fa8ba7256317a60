/**
 * The well-known-names list the token build refuses to impersonate. Configuration
 * (WELL_KNOWN_NAMES, else the built-in list) is the default; an operator's edit is stored in KV
 * and overrides it until reset, so the list can change without a redeploy.
 */
import type { Config } from "../config.ts";
import { textProblem } from "../domain/text-rules.ts";
import { skeleton, type WellKnownMatcher, wellKnownMatcher } from "../tokens/well-known-names.ts";

export const WELL_KNOWN_NAMES_KEY: Deno.KvKey = ["admin", "well_known_names"];

/**
 * Caps that keep the stored list under KV's 64 KiB value limit. KV serializes a string in at most
 * two bytes a UTF-16 unit, so the total length is what bounds the size: 1000 names of 64 CJK
 * characters alone would be 128 KB.
 */
export const MAX_NAMES = 1000;
export const MAX_NAME_LENGTH = 64;
export const MAX_TOTAL_LENGTH = 30_000;

export interface StoredNames {
  names: string[];
  updatedAt: number;
}

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
  if (Object.keys(problems).length) throw new NamesError(problems);
  return out;
}

/** Replaces the list. */
export async function setWellKnownNames(
  s: NamesSource & { clock?: () => number },
  names: unknown[],
): Promise<CurrentNames> {
  const stored: StoredNames = { names: normalizeNames(names), updatedAt: (s.clock ?? Date.now)() };
  await s.kv.set(WELL_KNOWN_NAMES_KEY, stored);
  return { ...stored, source: "kv" };
}

/**
 * Adds and removes names against the list in force (the configured one on the first edit).
 * Removal matches by skeleton, so "usdc" removes "USDC". Guarded by the versionstamp, so two
 * operators editing at once both land.
 */
export async function editWellKnownNames(
  s: NamesSource & { clock?: () => number },
  edit: { add?: unknown[]; remove?: unknown[] },
): Promise<CurrentNames> {
  const remove = normalizeNames(edit.remove ?? []).map(skeleton);
  const add = normalizeNames(edit.add ?? []);
  for (let attempt = 0; attempt < 20; attempt++) {
    const entry = await s.kv.get<StoredNames>(WELL_KNOWN_NAMES_KEY);
    const base = entry.value?.names ?? s.config.wellKnownNames;
    const kept = base.filter((n) => !remove.includes(skeleton(n)));
    const stored: StoredNames = {
      names: normalizeNames([...kept, ...add]),
      updatedAt: (s.clock ?? Date.now)(),
    };
    const res = await s.kv.atomic().check(entry).set(WELL_KNOWN_NAMES_KEY, stored).commit();
    if (res.ok) return { ...stored, source: "kv" };
  }
  throw new Error("the well-known-names list is being edited concurrently; retry");
}

/** Drops the operator's list: the configured one is in force again. */
export async function resetWellKnownNames(s: NamesSource): Promise<CurrentNames> {
  await s.kv.delete(WELL_KNOWN_NAMES_KEY);
  return readWellKnownNames(s);
}
