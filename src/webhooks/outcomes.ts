/**
 * The hook where build outcomes meet webhooks: called inside the lifecycle command's transaction,
 * it turns the outcome events being committed into scheduled deliveries and their first queue
 * messages, all in the same atomic commit (an outcome recorded is an outcome delivered, at least
 * once).
 */
import type { Enqueue, StreamAppend, Tx } from "../../events/store.ts";
import type { DomainEvent, WebhookDeliveryScheduled } from "../../events/types.ts";
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
  return await scheduleForKey(
    s,
    tx,
    build.keyId,
    (endpoints, now) => scheduleOutcomeDeliveries(build, events, endpoints, now),
  );
}

/**
 * The shell every outcome's webhooks share (a build's, an update's): the key's endpoints read in
 * the outcome's commit, the deliveries `schedule` decides appended there, with their first queue
 * messages.
 */
export async function scheduleForKey(
  s: Services,
  tx: Tx,
  keyId: string,
  schedule: (endpoints: WebhookEndpointDoc[], now: number) => WebhookDeliveryScheduled[],
): Promise<{ append: StreamAppend[]; enqueue: Enqueue[] }> {
  // A deleted key's owner can no longer see or remove its endpoints: they get nothing more.
  const key = await read(tx, keysProjection, [keyId]);
  if (!key || key.deleted) return { append: [], enqueue: [] };
  const ids = await keyEndpointIds(tx.kv, keyId);
  if (ids.length === 0) return { append: [], enqueue: [] };
  const endpoints =
    (await readMany(tx, ids.map((id) => [webhookEndpointProjection, [id]] as const)))
      .filter((d): d is WebhookEndpointDoc => d !== null);
  const scheduled = schedule(endpoints, s.clock());
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
