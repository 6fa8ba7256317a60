/**
 * The metadata limits, in one place each: the daily one (`limits.metadataPerDay`,
 * METADATA_PER_DAY: the purchase's `usage.metadata` today, reset at 00:00 UTC) and the hosted
 * items per key (`limits.hostedItemsPerKey`, HOSTED_ITEMS_PER_KEY: never reset, since hosted
 * items never expire). Each has its check, its refusal and the words the API reference says of
 * it; GET /v1/pricing and GET /v1/me publish them through src/pricing/published-limits.ts.
 */
import type { UsageDoc } from "../../projections/usage.ts";
import type { Limits } from "../config.ts";
import type { Rejection } from "../kernel/rejection.ts";
import { secondsUntilUtcMidnight } from "../kernel/time.ts";

export interface LimitRejection extends Rejection {
  rejected: "daily_limit";
  /** Seconds until the limit resets; absent when it never does. */
  retryAfterS?: number;
}

type Count = (n: number) => string;

export const metadataPerDay = {
  /** True when the purchase has no metadata call left today. */
  reached: (l: Pick<Limits, "metadataPerDay">, usage: Pick<UsageDoc, "metadata"> | null) =>
    (usage?.metadata ?? 0) >= l.metadataPerDay,

  rejection: (l: Pick<Limits, "metadataPerDay">, now: number): LimitRejection => ({
    rejected: "daily_limit",
    message: `Daily metadata limit reached (${l.metadataPerDay} per day); ` +
      "it resets at 00:00 UTC",
    fields: {},
    retryAfterS: secondsUntilUtcMidnight(now),
  }),

  text: (l: Pick<Limits, "metadataPerDay">, count: Count) =>
    `daily metadata limit (${count(l.metadataPerDay)} per UTC day)`,
};

export const hostedItemsPerKey = {
  reached: (l: Pick<Limits, "hostedItemsPerKey">, hostedCount: number | null) =>
    (hostedCount ?? 0) >= l.hostedItemsPerKey,

  // No Retry-After: the limit does not reset.
  rejection: (l: Pick<Limits, "hostedItemsPerKey">): LimitRejection => ({
    rejected: "daily_limit",
    message: `Hosted items limit reached (${l.hostedItemsPerKey} per key); ` +
      "this limit does not reset",
    fields: {},
  }),

  text: (l: Pick<Limits, "hostedItemsPerKey">, count: Count) =>
    `${count(l.hostedItemsPerKey)} hosted items per key`,
};
