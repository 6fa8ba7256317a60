/**
 * Webhooks for token updates: an update's outcome (`token.updated` when its transaction landed
 * and was read back, `token.update_failed` when it landed with an error or, relayed, expired
 * unseen) is delivered to the key's endpoints subscribed to it, scheduled in the same commit as
 * the outcome (src/creation/update-verify.ts), as a build's outcomes are (outcomes.ts). One message id per
 * update and outcome.
 */
import type { Enqueue, StreamAppend, Tx } from "../../events/store.ts";
import type {
  DomainEvent,
  WebhookDeliveryScheduled,
  WebhookEventType,
} from "../../events/types.ts";
import type { UpdateDoc } from "../../projections/updates.ts";
import type { WebhookEndpointDoc } from "../../projections/webhooks.ts";
import type { Services } from "../services.ts";
import { toSubscribers } from "./decide.ts";
import { scheduleForKey } from "./outcomes.ts";

export function updateWebhookTypeOf(e: DomainEvent): WebhookEventType | null {
  if (e.type === "TokenUpdateLanded") return "token.updated";
  if (e.type === "TokenUpdateFailed") return "token.update_failed";
  return null;
}

/** The Standard Webhooks body `{type, timestamp, data}` for an update's outcome. */
export function updatePayload(type: WebhookEventType, u: UpdateDoc, e: DomainEvent, at: number) {
  const landed = e.type === "TokenUpdateLanded" ? e.data : null;
  const failed = e.type === "TokenUpdateFailed" ? e.data : null;
  return JSON.stringify({
    type,
    timestamp: new Date(at).toISOString(),
    data: {
      updateId: u.updateId,
      buildId: u.buildId,
      mint: u.mint,
      status: landed ? "landed" : "failed",
      signature: landed?.signature ?? failed?.signature ?? null,
      authority: u.authority,
      changes: u.changes,
      before: u.before,
      after: landed?.after ?? u.after,
      slot: landed?.slot ?? null,
      reason: failed?.reason ?? null,
      fee: { lamports: u.feeLamports, lamportsSeen: landed?.feeLamportsSeen ?? null },
    },
  });
}

/** Pure: one delivery per outcome event and per enabled endpoint subscribed to its type. */
export function scheduleUpdateDeliveries(
  u: UpdateDoc,
  events: DomainEvent[],
  endpoints: WebhookEndpointDoc[],
  now: number,
): WebhookDeliveryScheduled[] {
  const out: WebhookDeliveryScheduled[] = [];
  for (const e of events) {
    const type = updateWebhookTypeOf(e);
    if (!type) continue;
    out.push(...toSubscribers(endpoints, type, now, {
      messageId: `msg_upd_${u.updateId}_${type.slice("token.".length)}`,
      buildId: u.buildId,
      payload: updatePayload(type, u, e, now),
    }));
  }
  return out;
}

/** The shell: the key's endpoints read in the outcome's commit, its deliveries scheduled there. */
export async function updateOutcomeDeliveries(
  s: Services,
  tx: Tx,
  u: UpdateDoc,
  events: DomainEvent[],
): Promise<{ append: StreamAppend[]; enqueue: Enqueue[] }> {
  if (!events.some((e) => updateWebhookTypeOf(e) !== null)) return { append: [], enqueue: [] };
  return await scheduleForKey(
    s,
    tx,
    u.keyId,
    (endpoints, now) => scheduleUpdateDeliveries(u, events, endpoints, now),
  );
}
