/**
 * The read models the build decision uses: the caller's key, the purchase's usage today, and the
 * highest build id so far.
 */
import type { Tx } from "../../events/store.ts";
import { buildsProjection } from "../../projections/builds.ts";
import { keysProjection } from "../../projections/keys.ts";
import { usageProjection } from "../../projections/usage.ts";
import { payerConductProjection } from "../../projections/conduct.ts";
import { keyOf, readMany } from "../commands/read.ts";
import { utcDay } from "../kernel/time.ts";
import type { BuildCall, BuildCallState } from "./decide.ts";

export async function loadBuild(tx: Tx, cmd: BuildCall): Promise<BuildCallState> {
  const [key, usage, payer] = await readMany(
    tx,
    [
      [keysProjection, [cmd.keyId]],
      [usageProjection, [cmd.purchaseId, utcDay(cmd.now)]],
      [payerConductProjection, [cmd.draft.payer]],
    ] as const,
  );
  return { key, usage, payer, lastBuildId: await lastBuildId(tx.kv) };
}

/**
 * Build ids follow the `build` projection (keyed by id, so KV orders it numerically); it is read
 * inside the commit whose log-head guard makes the next id unique, and replay rebuilds it.
 */
export async function lastBuildId(kv: Deno.Kv): Promise<number | null> {
  const newest = kv.list({ prefix: keyOf(buildsProjection, []) }, { reverse: true, limit: 1 });
  for await (const e of newest) {
    const id = e.key[e.key.length - 1];
    return typeof id === "number" ? id : null;
  }
  return null;
}
