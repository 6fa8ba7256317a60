/** Runs an access command against the store: read state, decide, append (retried on conflict). */
import type { EventStore } from "../../../events/store.ts";
import type { DomainEvent, StoredEvent } from "../../../events/types.ts";
import type { KeyDoc } from "../../../projections/keys.ts";
import type { PurchaseDoc } from "../../../projections/purchases.ts";
import { isRejection, type Rejection, toApiError } from "../rejection.ts";
import { type AccessCommand, decideAccess } from "./decide.ts";

export async function handleAccess(store: EventStore, cmd: AccessCommand): Promise<StoredEvent[]> {
  const { result, events } = await store.transact<DomainEvent[] | Rejection>(async (tx) => {
    const key = "keyId" in cmd ? await tx.projection<KeyDoc>("key", [cmd.keyId]) : null;
    const purchaseId = "purchaseId" in cmd ? cmd.purchaseId : key?.purchaseId;
    const purchase = purchaseId ? await tx.projection<PurchaseDoc>("purchase", [purchaseId]) : null;
    const decided = decideAccess(cmd, { purchase, key });
    if (isRejection(decided)) return { result: decided };
    const stream = `purchase-${purchaseId}`;
    return {
      append: [{ stream, expectedVersion: await tx.streamVersion(stream), events: decided }],
      result: decided,
    };
  });
  if (isRejection(result)) throw toApiError(result);
  return events;
}
