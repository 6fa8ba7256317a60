/** Two projection stores compared document by document, in key order. */
import { canonicalJson } from "../events/hash.ts";
import { PROJECTIONS } from "../events/keys.ts";
import { readAhead } from "../events/read-ahead.ts";
import { keyId } from "./key-hash.ts";
import { compareKvKeys } from "./kv-order.ts";

export interface ProjectionMismatch {
  key: string;
  live: unknown;
  rebuilt: unknown;
}

export interface ProjectionComparison {
  /** Documents compared on the live side plus those only the rebuild has. */
  documents: number;
  mismatchCount: number;
  /** The first `maxMismatches` mismatches; `mismatchCount` has them all. */
  mismatches: ProjectionMismatch[];
}

/**
 * Compares the live projections with a rebuilt set held in another KV by walking both in key
 * order at once (a merge of two ordered `list`s, no point reads). Every live document under the
 * projections prefix must have a rebuilt twin (a stray document of an unknown projection is a
 * mismatch too); every rebuilt document of `names` must exist live. Mismatches are reported in
 * key order.
 */
export async function compareProjectionStores(
  live: Deno.Kv,
  rebuilt: Deno.Kv,
  names: string[],
  opts: {
    maxMismatches?: number;
    onMismatch?: (m: ProjectionMismatch) => void | Promise<void>;
    /** Decides a mismatch found: the one to report, or null when it is none after all. */
    settle?: (m: ProjectionMismatch) => Promise<ProjectionMismatch | null>;
  } = {},
): Promise<ProjectionComparison> {
  const max = opts.maxMismatches ?? 1000;
  const out: ProjectionComparison = { documents: 0, mismatchCount: 0, mismatches: [] };
  const report = async (found: ProjectionMismatch) => {
    const m = opts.settle ? await opts.settle(found) : found;
    if (!m) return;
    out.mismatchCount++;
    if (out.mismatches.length < max) out.mismatches.push(m);
    await opts.onMismatch?.(m);
  };
  const checked = new Set(names);
  // The rebuilt side may hold extra folds (the audit's) beside the projections it is checked on.
  const counts = (e: Deno.KvEntry<unknown>) =>
    typeof e.key[PROJECTIONS.length] === "string" &&
    checked.has(e.key[PROJECTIONS.length] as string);

  const a = readAhead(live.list({ prefix: PROJECTIONS }, { batchSize: 1000 }))[
    Symbol.asyncIterator
  ]();
  const b = readAhead(rebuilt.list({ prefix: PROJECTIONS }, { batchSize: 1000 }))[
    Symbol.asyncIterator
  ]();
  let l = await a.next();
  let r = await b.next();
  while (!l.done || !r.done) {
    // A comparator that ever ordered two keys wrongly could only report spurious mismatches:
    // documents are compared only under identical keys, and every unmatched one is reported.
    const order = l.done ? 1 : r.done ? -1 : compareKvKeys(l.value.key, r.value.key);
    if (order === 0) {
      out.documents++;
      if (!sameValue(l.value!.value, r.value!.value)) {
        await report({ key: keyId(l.value!.key), live: l.value!.value, rebuilt: r.value!.value });
      }
      l = await a.next();
      r = await b.next();
    } else if (order < 0) {
      out.documents++;
      await report({ key: keyId(l.value!.key), live: l.value!.value, rebuilt: null });
      l = await a.next();
    } else {
      if (counts(r.value!)) {
        out.documents++;
        await report({ key: keyId(r.value!.key), live: null, rebuilt: r.value!.value });
      }
      r = await b.next();
    }
  }
  return out;
}

/** Equal as canonical JSON; the plain JSON text decides first when it already matches. */
function sameValue(a: unknown, b: unknown): boolean {
  try {
    // Same text means same properties in the same order with the same values.
    if (JSON.stringify(a) === JSON.stringify(b)) return true;
  } catch { /* a bigint: canonicalJson decides (and throws the same way) */ }
  return canonicalJson(a) === canonicalJson(b);
}
