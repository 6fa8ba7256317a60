/**
 * The builds in the audit's state, read back: they are stored in packs (folds.ts
 * `auditBuildPacks`), and every reader wants builds.
 */
import { projectionKey } from "../../events/keys.ts";
import { getAll } from "../../projections/get-all.ts";
import { docIn, type Pack, packKey } from "../../projections/packed.ts";
import { AUDIT_BUILD, type AuditBuildDoc, auditBuildPacks, BUILDS_PER_PACK } from "./folds.ts";
import { listEntries } from "../commands/read.ts";

/** The pack (its key below the fold's prefix) that holds build `id`. */
export const buildPack = (id: number): Deno.KvKeyPart => packKey([id], BUILDS_PER_PACK)[0];

/**
 * The packs of builds in key order, each with its key: a reader that stops between packs knows
 * where it stopped.
 */
export async function* listBuildPacks(
  state: Deno.Kv,
  opts: { batchSize?: number } = {},
): AsyncGenerator<{ pack: Deno.KvKeyPart; builds: AuditBuildDoc[] }> {
  const batchSize = Math.max(1, Math.ceil((opts.batchSize ?? 500) / BUILDS_PER_PACK));
  for await (const { sub, doc } of listEntries(state, auditBuildPacks, [], { batchSize })) {
    yield { pack: sub[0], builds: doc.docs };
  }
}

/**
 * Packs read at a time by `readBuilds`: four reads of ten, 1.6 MiB, let go once their builds are
 * out.
 */
const PACKS_AT_ONCE = 40;

/** The builds with these ids (null: none), each pack read once. */
export async function readBuilds(
  state: Deno.Kv,
  ids: number[],
): Promise<(AuditBuildDoc | null)[]> {
  const byPack = new Map<Deno.KvKeyPart, number[]>();
  ids.forEach((id, i) => {
    const n = buildPack(id);
    const at = byPack.get(n);
    if (at) at.push(i);
    else byPack.set(n, [i]);
  });
  const packs = [...byPack.keys()];
  const out: (AuditBuildDoc | null)[] = new Array(ids.length).fill(null);
  for (let i = 0; i < packs.length; i += PACKS_AT_ONCE) {
    const some = packs.slice(i, i + PACKS_AT_ONCE);
    const read = await getAll<Pack<AuditBuildDoc>>(
      state,
      some.map((n) => projectionKey(AUDIT_BUILD, [n])),
    );
    some.forEach((n, j) => {
      for (const k of byPack.get(n)!) out[k] = docIn(read[j], ids[k]);
    });
  }
  return out;
}
