/**
 * The daily token limit, in one place: its variable (`limits.tokensPerDay`, TOKENS_PER_DAY), the
 * count it is checked against (the purchase's `usage.tokens` today, UTC), its check and the 429
 * it answers, and the words the API reference says about it. GET /v1/pricing and GET /v1/me
 * publish it through src/pricing/published-limits.ts.
 *
 * The build checks it twice with the same function: before any RPC (so a key at its limit costs
 * nothing) and inside the commit that counts the build (the authoritative one).
 */
import type { UsageDoc } from "../../projections/usage.ts";
import type { Limits } from "../config.ts";
import { reject, type Rejection } from "../kernel/rejection.ts";
import { ApiError } from "../kernel/errors.ts";
import { secondsUntilUtcMidnight } from "../kernel/time.ts";

type TokenLimits = Pick<Limits, "tokensPerDay">;

const message = (l: TokenLimits) =>
  `Daily token build limit of ${l.tokensPerDay} reached; it resets at 00:00 UTC`;

const fieldsOf = (l: TokenLimits, used: number, now: number) => ({
  tokensPerDay: l.tokensPerDay,
  usedToday: used,
  resetsInSeconds: secondsUntilUtcMidnight(now),
});

export const tokensPerDay = {
  /** Builds the purchase has made today, from its usage document. */
  used: (usage: Pick<UsageDoc, "tokens"> | null): number => usage?.tokens ?? 0,

  /** The decision's answer when another build today is over the limit; null while one is left. */
  rejection(l: TokenLimits, used: number, now: number): Rejection | null {
    return used >= l.tokensPerDay
      ? reject("daily_limit", message(l), fieldsOf(l, used, now))
      : null;
  },

  /** The 429 (with Retry-After: the seconds to 00:00 UTC). */
  error(l: TokenLimits, used: number, now: number): ApiError {
    const fields = fieldsOf(l, used, now);
    return new ApiError("daily_limit", message(l), fields, {
      "Retry-After": String(fields.resetsInSeconds),
    });
  },

  /** The check before any RPC: the 429 when the limit is reached, null while a build is left. */
  refusal(l: TokenLimits, used: number, now: number): ApiError | null {
    return used >= l.tokensPerDay ? tokensPerDay.error(l, used, now) : null;
  },

  /** For POST /v1/tokens in the API reference. */
  text: (l: TokenLimits, count: (n: number) => string) =>
    `counts toward the daily token limit (${count(l.tokensPerDay)} per UTC day)`,
};
