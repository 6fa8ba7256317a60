/** Runs lifecycle decisions for one build through the store; returns the record afterwards. */
import { projectionKey } from "../../events/keys.ts";
import { buildById } from "./build-records.ts";
import type { DomainEvent } from "../../events/types.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import type { Enqueue, ExtraSet, Tx } from "../../events/store.ts";
import type { PurchaseDoc } from "../../projections/purchases.ts";
import type { Services } from "../services.ts";
import { decideLifecycle, type LifecycleCommand } from "./decide.ts";
import { outcomeDeliveries } from "../webhooks/outcomes.ts";

export async function recordLifecycle(
  s: Services,
  buildId: number,
  cmd: LifecycleCommand,
  /** Written in the same commit as the events, and only if there are events. */
  extra: { enqueue?: Enqueue[]; sets?: ExtraSet[] } = {},
): Promise<{ build: BuildDoc | null; events: DomainEvent[] }> {
  const { events } = await s.store.transact(async (tx) => {
    const build = await tx.projection<BuildDoc>("build", [buildId]);
    if (!build) return { result: null };
    const { key, recordedUnverified } = await suspensionTarget(tx, build);
    const decided = decideLifecycle(cmd, {
      build,
      key,
      suspendAfterUnverified: s.config.suspendAfterUnverified,
      recordedUnverified,
    });
    if (decided.length === 0) return { result: null };
    const onKey = decided.filter((e) => e.type === "KeySuspended");
    const onBuild = decided.filter((e) => e.type !== "KeySuspended");
    const buildStream = `build-${buildId}`;
    // Outcomes schedule their webhook deliveries in this same commit.
    const hooks = await outcomeDeliveries(s, tx, build, onBuild);
    return {
      append: [
        {
          stream: buildStream,
          expectedVersion: await tx.streamVersion(buildStream),
          events: onBuild,
        },
        { stream: `purchase-${build.purchaseId}`, expectedVersion: "any", events: onKey },
        ...hooks.append,
      ],
      enqueue: [...(extra.enqueue ?? []), ...hooks.enqueue],
      sets: extra.sets,
      result: null,
    };
  });
  const build = await buildById(s.kv, buildId);
  return { build, events };
}

/**
 * Unverified landings count against the purchase, and a suspension falls on the key in use now:
 * a key deleted after its builds were made must neither reset the count nor absorb the verdict.
 */
async function suspensionTarget(
  tx: Tx,
  build: BuildDoc,
): Promise<{ key: KeyDoc | null; recordedUnverified: number }> {
  const purchase = await tx.projection<PurchaseDoc>("purchase", [build.purchaseId]);
  const ids = purchase?.keyIds.length ? purchase.keyIds : [build.keyId];
  const keys = (await tx.getMany<KeyDoc>(ids.map((id) => projectionKey("key", [id]))))
    .filter((k): k is KeyDoc => k !== null);
  const active = keys.find((k) => k.keyId === purchase?.activeKeyId) ??
    keys.find((k) => k.keyId === build.keyId) ?? null;
  return { key: active, recordedUnverified: keys.reduce((n, k) => n + k.unverifiedCount, 0) };
}
