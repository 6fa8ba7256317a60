/** The read models webhook commands use: an endpoint, a delivery, and a key's endpoint ids. */
import type { Tx } from "../../events/store.ts";
import {
  webhookDeliveryProjection,
  webhookEndpointProjection,
  webhooksByKeyProjection,
} from "../../projections/webhooks.ts";
import { read, readList, readMany, type ReadTx } from "../commands/read.ts";
import type { DeliveryState, ReplayDelivery } from "./commands.ts";

export const readEndpoint = (tx: ReadTx, endpointId: string) =>
  read(tx, webhookEndpointProjection, [endpointId]);

export const readDelivery = (tx: ReadTx, deliveryId: string) =>
  read(tx, webhookDeliveryProjection, [deliveryId]);

/** The ids of the endpoints a key registered (deleted ones drop out of the index). */
export const keyEndpointIds = (kv: Deno.Kv, keyId: string) =>
  readList(kv, webhooksByKeyProjection, [keyId]);

/** A delivery and the endpoint it goes to. */
export async function loadDelivery(
  tx: Tx,
  cmd: { deliveryId: string },
): Promise<DeliveryState> {
  const delivery = await readDelivery(tx, cmd.deliveryId);
  const endpoint = delivery ? await readEndpoint(tx, delivery.endpointId) : null;
  return { delivery, endpoint };
}

/** The delivery to replay and the endpoint it is replayed to. */
export async function loadReplay(tx: Tx, cmd: ReplayDelivery) {
  const [original, endpoint] = await readMany(
    tx,
    [
      [webhookDeliveryProjection, [cmd.originalId]],
      [webhookEndpointProjection, [cmd.endpointId]],
    ] as const,
  );
  return { original, endpoint };
}
