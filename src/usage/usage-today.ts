/** Today's usage (UTC) as /v1/me and the portal show it: requests per key, builds and metadata per purchase. */
import { projectionKey } from "../../events/keys.ts";
import type { UsageDoc } from "../../projections/usage.ts";
import { utcDay } from "../kernel/time.ts";
import { dailyRequestKey } from "./daily-requests.ts";
import type { Services } from "../services.ts";

export async function usageToday(s: Services, keyId: string, purchaseId: string) {
  const day = utcDay(s.clock());
  const [requests, usage] = await s.kv.getMany<[number, UsageDoc]>([
    dailyRequestKey(keyId, day),
    projectionKey("usage", [purchaseId, day]),
  ]);
  return {
    requests: requests.value ?? 0,
    tokens: usage.value?.tokens ?? 0,
    metadata: usage.value?.metadata ?? 0,
  };
}
