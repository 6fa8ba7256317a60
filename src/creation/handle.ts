/** Runs lifecycle decisions for one build through the store; returns the record afterwards. */
import { projectionKey } from "../../events/keys.ts";
import type { DomainEvent } from "../../events/types.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import type { Enqueue } from "../../events/store.ts";
import type { Services } from "../services.ts";
import { decideLifecycle, type LifecycleCommand } from "./decide.ts";

export async function recordLifecycle(
  s: Services,
  buildId: number,
  cmd: LifecycleCommand,
  extra: { enqueue?: Enqueue[] } = {},
): Promise<{ build: BuildDoc | null; events: DomainEvent[] }> {
  const { events } = await s.store.transact(async (tx) => {
    const build = await tx.projection<BuildDoc>("build", [buildId]);
    if (!build) return { result: null };
    const key = await tx.projection<KeyDoc>("key", [build.keyId]);
    const decided = decideLifecycle(cmd, {
      build,
      key,
      suspendAfterUnverified: s.config.suspendAfterUnverified,
    });
    if (decided.length === 0) return { result: null };
    const onKey = decided.filter((e) => e.type === "KeySuspended");
    const onBuild = decided.filter((e) => e.type !== "KeySuspended");
    const buildStream = `build-${buildId}`;
    return {
      append: [
        {
          stream: buildStream,
          expectedVersion: await tx.streamVersion(buildStream),
          events: onBuild,
        },
        { stream: `purchase-${build.purchaseId}`, expectedVersion: "any", events: onKey },
      ],
      enqueue: extra.enqueue,
      result: null,
    };
  });
  const build = (await s.kv.get<BuildDoc>(projectionKey("build", [buildId]))).value;
  return { build, events };
}
