/**
 * The read models lifecycle decisions use: the build, and the key a suspension would fall on with
 * the unverified landings already counted against the purchase.
 */
import type { Tx } from "../../events/store.ts";
import { buildsProjection } from "../../projections/builds.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { read, readMany } from "../commands/read.ts";
import type { BuildDoc } from "../../projections/builds.ts";

export interface LifecycleReads {
  build: BuildDoc | null;
  key: KeyDoc | null;
  recordedUnverified: number;
}

export async function loadLifecycle(tx: Tx, cmd: { buildId: number }): Promise<LifecycleReads> {
  const build = await read(tx, buildsProjection, [cmd.buildId]);
  if (!build) return { build, key: null, recordedUnverified: 0 };
  return { build, ...(await suspensionTarget(tx, build)) };
}

/**
 * Unverified landings count against the purchase, and a suspension falls on the key in use now:
 * a key deleted after its builds were made must neither reset the count nor absorb the verdict.
 */
async function suspensionTarget(
  tx: Tx,
  build: BuildDoc,
): Promise<{ key: KeyDoc | null; recordedUnverified: number }> {
  const purchase = await read(tx, purchasesProjection, [build.purchaseId]);
  const ids = purchase?.keyIds.length ? purchase.keyIds : [build.keyId];
  const keys = (await readMany(tx, ids.map((id) => [keysProjection, [id]] as const)))
    .filter((k): k is KeyDoc => k !== null);
  const active = keys.find((k) => k.keyId === purchase?.activeKeyId) ??
    keys.find((k) => k.keyId === build.keyId) ?? null;
  return { key: active, recordedUnverified: keys.reduce((n, k) => n + k.unverifiedCount, 0) };
}
