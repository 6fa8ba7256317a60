/**
 * Every inline projection, in one list: the store folds them on append, replay from the log.
 * Each is registered through `registered`, so every fold sees events in their current shape
 * (upcast.ts) and only the event types it declares.
 */
import type { EventType, StoredEvent } from "../events/types.ts";
import type { DeclaredProjection } from "../events/projection.ts";
import { upcast } from "./upcast.ts";
import { keysProjection } from "./keys.ts";
import {
  purchaseByReferenceProjection,
  purchasesProjection,
  walletPurchasesProjection,
} from "./purchases.ts";
import { hostedCountProjection, usageProjection } from "./usage.ts";
import {
  buildByMessageProjection,
  buildByMintProjection,
  buildByReferenceProjection,
  buildBySignatureProjection,
  buildsProjection,
  openBuildsProjection,
} from "./builds.ts";
import { hostedImageProjection, hostedMetadataProjection } from "./hosted.ts";
import { buildsByKeyProjection } from "./build-list.ts";
import { payerConductProjection, purchaseConductProjection } from "./conduct.ts";
import { tokenCurrentProjection, updateByMessageProjection, updatesProjection } from "./updates.ts";
import {
  webhookDeliveriesByEndpointProjection,
  webhookDeliveryProjection,
  webhookEndpointProjection,
  webhooksByKeyProjection,
} from "./webhooks.ts";

/**
 * Event types no projection folds, each with the reason. Empty today: every event changes some
 * read model. An entry here is a decision, reviewed; a type missing from both this list and every
 * projection's `handles` fails tests/projections/coverage.test.ts.
 */
export const IGNORED_EVENTS: Readonly<Partial<Record<EventType, string>>> = {};

/**
 * The projection as the store and replay run it: events it does not declare never reach it, and
 * the ones it does arrive upcast. The stored event is not touched (its hash covers what was
 * written), only the copy the fold reads.
 */
export function registered<D>(p: DeclaredProjection<D>): DeclaredProjection<D> {
  const handled: ReadonlySet<EventType> = new Set(p.handles);
  const current = (e: StoredEvent) => (handled.has(e.type) ? upcast(e) : null);
  return {
    name: p.name,
    handles: p.handles,
    keysOf(e) {
      const c = current(e);
      return c ? p.keysOf(c) : [];
    },
    evolve(doc, e, key) {
      const c = current(e);
      return c ? p.evolve(doc, c, key) : doc;
    },
  };
}

/** The folds as written (tests check their declarations against what they do). */
export const declaredProjections: DeclaredProjection[] = [
  keysProjection,
  purchasesProjection,
  walletPurchasesProjection,
  purchaseByReferenceProjection,
  usageProjection,
  hostedCountProjection,
  buildsProjection,
  buildByMintProjection,
  buildByMessageProjection,
  buildByReferenceProjection,
  buildBySignatureProjection,
  openBuildsProjection,
  hostedMetadataProjection,
  hostedImageProjection,
  buildsByKeyProjection,
  webhookEndpointProjection,
  webhooksByKeyProjection,
  webhookDeliveryProjection,
  webhookDeliveriesByEndpointProjection,
  payerConductProjection,
  purchaseConductProjection,
  updatesProjection,
  updateByMessageProjection,
  tokenCurrentProjection,
] as DeclaredProjection[];

export const allProjections: DeclaredProjection[] = declaredProjections.map(registered);
