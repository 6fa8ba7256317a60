/** Runs lifecycle decisions for one build through the runner; returns the record afterwards. */
import { buildById } from "./build-records.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import type { Enqueue } from "../../events/store.ts";
import type { StoredEvent } from "../../events/types.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import type { Services } from "../services.ts";
import { decideLifecycle, type LifecycleCommand } from "./decide.ts";
import type { CreationEvent } from "./events.ts";
import { type LifecycleReads, loadLifecycle } from "./reads.ts";
import { outcomeDeliveries } from "../webhooks/outcomes.ts";

/** The build a lifecycle command is about, beside the command itself. */
type LifecycleCall = { buildId: number; cmd: LifecycleCommand };

export interface LifecycleExtra {
  /** Queued in the same commit as the events, and only if there are events. */
  enqueue?: Enqueue[];
  /** The request's answer, recorded in the same commit as the events (the relay's 202). */
  idempotency?: { scope: IdempotencyScope | null; status: number; body: unknown };
}

const lifecycleCommand = (
  s: Services,
  extra: LifecycleExtra,
): CommandHandler<LifecycleCall, LifecycleReads, CreationEvent, never, unknown> => ({
  load: loadLifecycle,
  decide: (call, { build, key, conduct, purchaseWallet }) =>
    build
      ? decideLifecycle(call.cmd, { build, key, conduct, purchaseWallet, policy: s.config.conduct })
      : [],
  stream: (call) => `build-${call.buildId}`,
  // A suspension falls on the key, whose events live on its purchase's stream.
  elsewhere: (e, { build }) => e.type === "KeySuspended" ? `purchase-${build!.purchaseId}` : null,
  // Outcomes schedule their webhook deliveries in this same commit.
  react: (tx, events, { build }) => outcomeDeliveries(s, tx, build!, events),
  respond: () => extra.idempotency?.body ?? null,
  enqueue: () => extra.enqueue ?? [],
});

export async function recordLifecycle(
  s: Services,
  buildId: number,
  cmd: LifecycleCommand,
  extra: LifecycleExtra = {},
): Promise<{ build: BuildDoc | null; events: StoredEvent[] }> {
  const { events } = await runCommand(lifecycleCommand(s, extra), { buildId, cmd }, {
    store: s.store,
    clock: s.clock,
    idempotency: extra.idempotency,
  });
  const build = await buildById(s.kv, buildId);
  return { build, events };
}
