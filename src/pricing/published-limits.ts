/**
 * The limits the API publishes, read from configuration: GET /v1/pricing lists every one a caller
 * plans against, GET /v1/me the three its key is counted by. The OpenAPI samples show the same.
 */
import type { Limits } from "../config.ts";

export const pricingLimits = (l: Limits) => ({
  requestsPerHour: l.requestsPerHour,
  tokensPerDay: l.tokensPerDay,
  metadataPerDay: l.metadataPerDay,
  imageBytes: l.imageBytes,
  imageMaxWidth: l.imageMaxWidth,
  imageMaxHeight: l.imageMaxHeight,
  hostedItemsPerKey: l.hostedItemsPerKey,
});

export const keyLimits = (l: Limits) => ({
  tokensPerDay: l.tokensPerDay,
  metadataPerDay: l.metadataPerDay,
  requestsPerHour: l.requestsPerHour,
});
