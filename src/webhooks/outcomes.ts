/**
 * The hook where build outcomes meet webhooks: called inside the lifecycle command's transaction,
 * it turns the outcome events being committed into scheduled deliveries and their first queue
 * messages, all in the same atomic commit (an outcome recorded is an outcome delivered, at least
 * once).
 */
import type { Enqueue, StreamAppend, Tx } from "../../events/store.ts";
import type { DomainEvent } from "../../events/types.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import { keysProjection } from "../../projections/keys.ts";
import { type WebhookEndpointDoc, webhookEndpointProjection } from "../../projections/webhooks.ts";
import { read, readMany } from "../commands/read.ts";
import { keyEndpointIds } from "./reads.ts";
import type { Services } from "../services.ts";
import { scheduleOutcomeDeliveries, webhookTypeOf } from "./decide.ts";
import { deliveryMessage, kvDeliveryScheduler } from "./scheduler.ts";

export async function outcomeDeliveries(
  s: Services,
  tx: Tx,
  build: BuildDoc,
  events: DomainEvent[],
): Promise<{ append: StreamAppend[]; enqueue: Enqueue[] }> {
  if (!events.some((e) => webhookTypeOf(e) !== null)) return { append: [], enqueue: [] };
  // A deleted key's owner can no longer see or remove its endpoints: they get nothing more.
  const key = await read(tx, keysProjection, [build.keyId]);
  if (!key || key.deleted) return { append: [], enqueue: [] };
  const ids = await keyEndpointIds(tx.kv, build.keyId);
  if (ids.length === 0) return { append: [], enqueue: [] };
  const endpoints =
    (await readMany(tx, ids.map((id) => [webhookEndpointProjection, [id]] as const)))
      .filter((d): d is WebhookEndpointDoc => d !== null);
  const scheduled = scheduleOutcomeDeliveries(build, events, endpoints, s.clock());
  const scheduler = s.webhookScheduler ?? kvDeliveryScheduler;
  // One append per endpoint stream: two appends to one stream in a commit would collide.
  const byStream = new Map<string, DomainEvent[]>();
  for (const e of scheduled) {
    const stream = `webhook-${e.data.endpointId}`;
    byStream.set(stream, [...(byStream.get(stream) ?? []), e]);
  }
  return {
    append: [...byStream].map(([stream, events]) => ({
      stream,
      expectedVersion: "any" as const,
      events,
    })),
    enqueue: scheduled.flatMap((e) => scheduler.schedule(deliveryMessage(e.data.deliveryId, 1), 0)),
  };
}
