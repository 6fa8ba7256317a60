/**
 * `CHAIN_RPC_LIMITS=public`: the chain refuses requests as the cluster's public endpoints do,
 * so what runs against it here meets the limits it will meet on mainnet. Per client address, at
 * most 100 requests in any 10 s and 40 of any one method (each call of a batch counts); past
 * either, HTTP 429 with Retry-After (the seconds until the request would have been let through)
 * and the JSON-RPC error body those endpoints send. Refused requests are not counted.
 */
import type { Clock } from "../kernel/clock.ts";
import { requestIds } from "./jsonrpc.ts";

export type ChainRpcLimitsMode = "none" | "public";

export interface ChainRateLimitConfig {
  total: number;
  perMethod: number;
  windowMs: number;
}

export const PUBLIC_ENDPOINT_LIMITS: ChainRateLimitConfig = {
  total: 100,
  perMethod: 40,
  windowMs: 10_000,
};

/** The messages the public endpoints answer with (error code 429, HTTP 429). */
export const TOO_MANY_FROM_IP =
  "Too many requests from your IP, contact your app developer or support@rpcpool.com.";
export const TOO_MANY_FOR_METHOD =
  "Too many requests for a specific RPC call, contact your app developer or support@rpcpool.com.";

interface ClientWindow {
  all: number[];
  byMethod: Map<string, number[]>;
}

export class ChainRateLimiter {
  #clients = new Map<string, ClientWindow>();
  /** Requests refused so far (all clients). */
  refused = 0;

  constructor(
    readonly limits: ChainRateLimitConfig = PUBLIC_ENDPOINT_LIMITS,
    readonly clock: Clock = Date.now,
  ) {}

  /** Counts the request for its client, or returns the 429 it gets instead. */
  check(client: string, body: string): Response | null {
    const now = this.clock();
    const w = this.#window(client, now);
    const methods = methodsOf(body);
    const counts = new Map<string, number>();
    for (const m of methods) if (m) counts.set(m, (counts.get(m) ?? 0) + 1);

    let waitMs = 0;
    let message = "";
    const over = (times: number[], n: number, limit: number, text: string) => {
      const excess = times.length + n - limit;
      if (excess <= 0) return;
      // Until enough of the oldest have left the window (a batch larger than the limit: a window).
      const at = excess <= times.length
        ? times[excess - 1] + this.limits.windowMs
        : now + this.limits.windowMs;
      if (at - now > waitMs) [waitMs, message] = [at - now, text];
    };
    over(w.all, methods.length, this.limits.total, TOO_MANY_FROM_IP);
    for (const [m, n] of counts) {
      over(w.byMethod.get(m) ?? [], n, this.limits.perMethod, TOO_MANY_FOR_METHOD);
    }
    if (waitMs > 0) {
      this.refused++;
      const ids = requestIds(body);
      const id = Array.isArray(ids) ? ids[0] ?? null : ids;
      return new Response(
        JSON.stringify({ jsonrpc: "2.0", error: { code: 429, message }, id }),
        {
          status: 429,
          headers: {
            "content-type": "application/json; charset=utf-8",
            "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))),
          },
        },
      );
    }
    for (const m of methods) {
      w.all.push(now);
      if (!m) continue;
      const list = w.byMethod.get(m) ?? [];
      list.push(now);
      w.byMethod.set(m, list);
    }
    return null;
  }

  #window(client: string, now: number): ClientWindow {
    const cutoff = now - this.limits.windowMs;
    let w = this.#clients.get(client);
    if (!w) {
      w = { all: [], byMethod: new Map() };
      this.#clients.set(client, w);
    }
    // Arrival times are in order: drop from the front.
    const keep = (times: number[]) => {
      let i = 0;
      while (i < times.length && times[i] <= cutoff) i++;
      return i ? times.slice(i) : times;
    };
    w.all = keep(w.all);
    for (const [m, times] of w.byMethod) {
      const kept = keep(times);
      if (kept.length) w.byMethod.set(m, kept);
      else w.byMethod.delete(m);
    }
    return w;
  }
}

/** Each call's method ("" where unreadable: it counts in the total only). */
function methodsOf(body: string): string[] {
  try {
    const parsed = JSON.parse(body);
    const calls: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    if (calls.length === 0) return [""];
    return calls.map((c) => {
      const m = (c as { method?: unknown } | null)?.method;
      return typeof m === "string" ? m : "";
    });
  } catch {
    return [""];
  }
}
