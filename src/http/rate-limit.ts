/**
 * Requests per key in fixed windows of one UTC clock hour. Every authenticated request counts;
 * the counter is changed only by a versionstamp-checked atomic commit, so it stays exact under
 * concurrency. Headers in both forms clients parse today (RateLimit-Limit/-Remaining/-Reset) and
 * the current IETF draft (RateLimit-Policy / RateLimit).
 */
import type { MiddlewareHandler } from "hono";
import type { Clock } from "../clock.ts";
import { utcDay } from "../../projections/usage.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";

const HOUR = 3_600_000;

export const hourWindow = (ms: number) => Math.floor(ms / HOUR);
export const requestCounterKey = (
  keyId: string,
  window: number,
): Deno.KvKey => ["rl", keyId, window];
export const dailyRequestKey = (keyId: string, day: string): Deno.KvKey => ["rq_day", keyId, day];

export interface RateLimitOptions {
  kv: Deno.Kv;
  limit: number;
  clock: Clock;
}

export function rateLimit(opts: RateLimitOptions): MiddlewareHandler<AppEnv> {
  return async function rateLimit(c, next) {
    const key = c.get("key");
    const now = opts.clock();
    const window = hourWindow(now);
    const resetS = Math.max(1, Math.ceil(((window + 1) * HOUR - now) / 1000));
    const counterKey = requestCounterKey(key.keyId, window);
    const dayKey = dailyRequestKey(key.keyId, utcDay(now));
    let used = 0;
    let counted = false;
    for (let attempt = 0; !counted; attempt++) {
      const [counter, day] = await opts.kv.getMany<[number, number]>([counterKey, dayKey]);
      used = counter.value ?? 0;
      if (used >= opts.limit) break;
      const ok = await opts.kv.atomic()
        .check(counter)
        .check(day)
        .set(counterKey, used + 1, { expireIn: 2 * HOUR })
        .set(dayKey, (day.value ?? 0) + 1, { expireIn: 2 * 24 * HOUR })
        .commit();
      if (ok.ok) {
        used += 1;
        counted = true;
      } else if (attempt > 500) {
        throw new ApiError("server_error", "rate limiter is overloaded; retry");
      } else {
        await new Promise((r) => setTimeout(r, Math.random() * 3));
      }
    }
    const remaining = Math.max(0, opts.limit - used);
    const headers: Record<string, string> = {
      "RateLimit-Limit": String(opts.limit),
      "RateLimit-Remaining": String(remaining),
      "RateLimit-Reset": String(resetS),
      "RateLimit-Policy": `"hour";q=${opts.limit};w=3600`,
      "RateLimit": `"hour";r=${remaining};t=${resetS}`,
    };
    if (!counted) {
      throw new ApiError("rate_limited", "Hourly request limit reached", {}, {
        ...headers,
        "Retry-After": String(resetS),
      });
    }
    for (const [k, v] of Object.entries(headers)) c.header(k, v);
    await next();
  };
}
