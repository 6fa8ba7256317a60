/** Every inline projection, in one list: the store folds them on append, replay from the log. */
import type { Projection } from "./projection.ts";
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
import {
  webhookDeliveriesByEndpointProjection,
  webhookDeliveryProjection,
  webhookEndpointProjection,
  webhooksByKeyProjection,
} from "./webhooks.ts";

export const allProjections: Projection[] = [
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
] as Projection[];
