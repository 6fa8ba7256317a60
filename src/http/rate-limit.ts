/**
 * Requests per key in fixed windows of one UTC clock hour. Every authenticated request counts;
 * the counter is changed only by a versionstamp-checked atomic commit, so it stays exact under
 * concurrency. Headers in both forms clients parse today (RateLimit-Limit/-Remaining/-Reset) and
 * the current IETF draft (RateLimit-Policy / RateLimit).
 */
import { dailyRequestKey } from "../usage/daily-requests.ts";
import { commitOrConflict } from "../../events/commit.ts";
import type { Context, MiddlewareHandler } from "hono";
import type { Clock } from "../kernel/clock.ts";
import { utcDay } from "../kernel/time.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";
import { Turns } from "../../events/turns.ts";
import { clientAddress } from "./client-address.ts";

const HOUR = 3_600_000;

export const hourWindow = (ms: number) => Math.floor(ms / HOUR);
export const requestCounterKey = (
  keyId: string,
  window: number,
): Deno.KvKey => ["rl", keyId, window];

export interface RateLimitOptions {
  kv: Deno.Kv;
  limit: number;
  clock: Clock;
  /**
   * Who is counted, and under which counter: by default the API key (its id, with the daily
   * count `/v1/me` shows). The portal and the Action count callers by address (`byClientAddress`).
   */
  subject?: (c: Context<AppEnv>) => { id: string; counter: (window: number) => Deno.KvKey };
}

/** Callers counted by network address (`name` keeps each limit's counters apart). */
export const byClientAddress = (name: string) => (c: Context<AppEnv>) => {
  const address = clientAddress(c);
  return { id: `${name} ${address}`, counter: (w: number) => [`rl_${name}`, address, w] };
};

const byApiKey = (c: Context<AppEnv>) => {
  const keyId = c.get("key").keyId;
  return { id: keyId, counter: (window: number) => requestCounterKey(keyId, window) };
};

export function rateLimit(opts: RateLimitOptions): MiddlewareHandler<AppEnv> {
  // Requests of one subject in this process count one at a time instead of colliding.
  const turns = new Turns();
  const subjectOf = opts.subject ?? byApiKey;
  return async function rateLimit(c, next) {
    const subject = subjectOf(c);
    const now = opts.clock();
    const window = hourWindow(now);
    const resetS = Math.max(1, Math.ceil(((window + 1) * HOUR - now) / 1000));
    const counterKey = subject.counter(window);
    const dayKey = opts.subject ? null : dailyRequestKey(subject.id, utcDay(now));
    const { used, counted } = await turns.run(subject.id, () => count(opts, counterKey, dayKey));
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

/** One counted request, or none when the window is used up; exact under concurrent writers. */
async function count(
  opts: RateLimitOptions,
  counterKey: Deno.KvKey,
  dayKey: Deno.KvKey | null,
): Promise<{ used: number; counted: boolean }> {
  for (let attempt = 0;; attempt++) {
    // Without a daily key the counter is read twice: one shape for both kinds of subject.
    const [counter, day] = await opts.kv.getMany<[number, number | null]>(
      [counterKey, dayKey ?? counterKey],
    );
    const used = counter.value ?? 0;
    if (used >= opts.limit) return { used, counted: false };
    const atomic = opts.kv.atomic().check(counter)
      .set(counterKey, used + 1, { expireIn: 2 * HOUR });
    if (dayKey) {
      atomic.check(day).set(dayKey, (day.value ?? 0) + 1, { expireIn: 2 * 24 * HOUR });
    }
    const ok = await commitOrConflict(atomic);
    if (ok.ok) return { used: used + 1, counted: true };
    if (attempt > 500) throw new ApiError("server_error", "rate limiter is overloaded; retry");
    await new Promise((r) => setTimeout(r, Math.random() * 3));
  }
}
