/** Today's usage (UTC) as /v1/me and the portal show it: requests per key, builds and metadata per purchase. */
import { usageProjection } from "../../projections/usage.ts";
import { kvReads, read } from "../commands/read.ts";
import { utcDay } from "../kernel/time.ts";
import { dailyRequestKey } from "./daily-requests.ts";
import type { Services } from "../services.ts";

export async function usageToday(s: Services, keyId: string, purchaseId: string) {
  const day = utcDay(s.clock());
  const [requests, usage] = await Promise.all([
    s.kv.get<number>(dailyRequestKey(keyId, day)),
    read(kvReads(s.kv), usageProjection, [purchaseId, day]),
  ]);
  return {
    requests: requests.value ?? 0,
    tokens: usage?.tokens ?? 0,
    metadata: usage?.metadata ?? 0,
  };
}
