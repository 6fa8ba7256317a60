/**
 * The builds in the audit's state, read back: they are stored in packs (folds.ts
 * `auditBuildPacks`), and every reader wants builds.
 */
import { PROJECTIONS } from "../../events/keys.ts";
import { getAll } from "../../projections/get-all.ts";
import { docIn, type Pack, packKey } from "../../projections/packed.ts";
import { listDocs } from "../commands/read.ts";
import { AUDIT_BUILD, type AuditBuildDoc, auditBuildPacks, BUILDS_PER_PACK } from "./folds.ts";

/** The pack (its key below the fold's prefix) that holds build `id`. */
export const buildPack = (id: number): Deno.KvKeyPart => packKey([id], BUILDS_PER_PACK)[0];

/** Every build in build order, or those in packs before the pack `before`. */
export async function* listBuilds(
  state: Deno.Kv,
  opts: { before?: Deno.KvKeyPart; batchSize?: number } = {},
): AsyncGenerator<AuditBuildDoc> {
  // A page of 500 packs would be 20 MiB: the page is a few packs, as many builds as before.
  const batchSize = Math.max(1, Math.ceil((opts.batchSize ?? 500) / BUILDS_PER_PACK));
  for await (const pack of listDocs(state, auditBuildPacks, [], { ...opts, batchSize })) {
    yield* pack.docs;
  }
}

/** The builds with these ids (null: none), each pack read once. */
export async function readBuilds(
  state: Deno.Kv,
  ids: number[],
): Promise<(AuditBuildDoc | null)[]> {
  const packs = [...new Set(ids.map(buildPack))];
  const read = await getAll<Pack<AuditBuildDoc>>(
    state,
    packs.map((n) => [...PROJECTIONS, AUDIT_BUILD, n]),
  );
  const byPack = new Map(packs.map((n, i) => [n, read[i]]));
  return ids.map((id) => docIn(byPack.get(buildPack(id)) ?? null, id));
}
