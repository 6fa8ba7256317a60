/**
 * The read models lifecycle decisions use: the build, the key a suspension would fall on, and the
 * purchase's conduct so far (its recent landings and its own wallet's unverified ones).
 */
import type { Tx } from "../../events/store.ts";
import { buildsProjection } from "../../projections/builds.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { purchasesProjection } from "../../projections/purchases.ts";
import { type PurchaseConductDoc, purchaseConductProjection } from "../../projections/conduct.ts";
import { read, readMany } from "../commands/read.ts";
import type { BuildDoc } from "../../projections/builds.ts";

export interface LifecycleReads {
  build: BuildDoc | null;
  key: KeyDoc | null;
  conduct: PurchaseConductDoc | null;
  /** The wallet that bought the purchase: its own landings are the key's conduct. */
  purchaseWallet: string | null;
}

export async function loadLifecycle(tx: Tx, cmd: { buildId: number }): Promise<LifecycleReads> {
  const build = await read(tx, buildsProjection, [cmd.buildId]);
  if (!build) return { build, key: null, conduct: null, purchaseWallet: null };
  const [purchase, conduct] = await readMany(
    tx,
    [
      [purchasesProjection, [build.purchaseId]],
      [purchaseConductProjection, [build.purchaseId]],
    ] as const,
  );
  // A suspension falls on the key in use now: a key deleted after its builds were made must not
  // absorb the verdict.
  const keyId = purchase?.activeKeyId ?? build.keyId;
  const key = await read(tx, keysProjection, [keyId]) ??
    (keyId === build.keyId ? null : await read(tx, keysProjection, [build.keyId]));
  return { build, key, conduct, purchaseWallet: purchase?.wallet ?? null };
}
