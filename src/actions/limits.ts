/**
 * The Action's own limits (it has no API key to count against): builds per payer wallet per UTC
 * day (ACTIONS_BUILDS_PER_WALLET_PER_DAY), counted here, and POSTs per client address per UTC
 * hour (ACTIONS_REQUESTS_PER_IP_PER_HOUR), counted by the rate limiter the route attaches. A
 * refusal is a 429 with Retry-After; the route answers it as an ActionError.
 */
import { commitOrConflict } from "../../events/commit.ts";
import { ApiError } from "../kernel/errors.ts";
import { DAY_MS, secondsUntilUtcMidnight, utcDay } from "../kernel/time.ts";
import type { Services } from "../services.ts";

export const walletCounterKey = (wallet: string, day: string): Deno.KvKey => [
  "actions_wallet",
  wallet,
  day,
];

/** Counts one build of `wallet` today, or throws the 429 when its day's builds are used up. */
export async function countWalletBuild(s: Services, wallet: string): Promise<void> {
  const limit = s.config.limits.actionsBuildsPerWalletPerDay;
  const now = s.clock();
  const key = walletCounterKey(wallet, utcDay(now));
  for (let attempt = 0; attempt < 100; attempt++) {
    const counter = await s.kv.get<number>(key);
    const used = counter.value ?? 0;
    if (used >= limit) throw walletLimitError(limit, now);
    const ok = await commitOrConflict(
      s.kv.atomic().check(counter).set(key, used + 1, { expireIn: 2 * DAY_MS }),
    );
    if (ok.ok) return;
  }
  throw new ApiError("server_error", "The Action's limiter is busy; retry");
}

function walletLimitError(limit: number, now: number): ApiError {
  const retryAfter = String(Math.max(1, secondsUntilUtcMidnight(now)));
  return new ApiError(
    "rate_limited",
    `This wallet has created ${limit} tokens through this Action today; try again after 00:00 UTC`,
    {},
    { "Retry-After": retryAfter },
  );
}
