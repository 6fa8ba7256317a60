/**
 * The RPC client's fetch, bounded: every JSON-RPC call finishes within one time budget, and a call
 * that is safe to repeat is retried on a network error, a timeout, a 429 or a 5xx while budget
 * remains. Without it a node that accepts the connection and never answers holds a request (and
 * the caller) forever.
 *
 * sendTransaction is never retried here: a repeat of a transaction that did land comes back as an
 * "already processed" preflight error, which would turn a success into a failure. The relay
 * re-broadcasts on its own schedule instead.
 *
 * With a budget (rpc-budget.ts) every attempt first takes its room in it, at this fetch's priority;
 * time spent waiting for room does not count against the call's time budget (that one is for a
 * node that does not answer). A 429 pauses the whole budget for its Retry-After (60 s at most:
 * one bad header must not stall everything). A user call that cannot go in time, or whose last
 * attempt met a 429, fails with RpcBusyError (503 + Retry-After at the HTTP layer), never with a
 * generic error.
 */
import { type RpcBudget, RpcBusyError, type RpcPriority } from "./rpc-budget.ts";
import type { ThrottleLog } from "./rpc-throttle-log.ts";
import { inSpan } from "../telemetry/tracing.ts";

export interface RpcFetchOptions {
  /** The whole call, retries included. */
  timeoutMs: number;
  retries: number;
  base?: typeof fetch;
  /** First pause between attempts; doubles each time. */
  backoffMs?: number;
  budget?: RpcBudget;
  /** Default "user". */
  priority?: RpcPriority;
  /** Where 429 and -32005 answers are reported, once a minute. */
  throttleLog?: ThrottleLog;
}

/** The longest pause a 429's Retry-After can impose on every request. */
export const MAX_RETRY_AFTER_MS = 60_000;

const NOT_RETRIED = new Set(["sendTransaction", "requestAirdrop"]);

/** One `rpc <method>` span per call, retries inside it (Deno's own fetch spans nest below). */
function traced(call: typeof fetch): typeof fetch {
  return function tracedRpcFetch(input, init) {
    const method = methodOf(init?.body);
    return inSpan(
      `rpc ${method}`,
      { "rpc.system": "jsonrpc", "rpc.method": method },
      () => call(input, init),
    );
  };
}

function methodOf(body: BodyInit | null | undefined): string {
  if (typeof body !== "string") return "unknown";
  try {
    const msg = JSON.parse(body);
    return Array.isArray(msg) ? `batch(${msg.length})` : String(msg.method);
  } catch {
    return "unknown";
  }
}

export function boundedRpcFetch(opts: RpcFetchOptions): typeof fetch {
  const base = opts.base ?? fetch;
  const backoff = opts.backoffMs ?? 100;
  // Even an unlimited budget is kept: a 429's Retry-After holds back every call, not just one.
  const budget = opts.budget ?? null;
  const priority = opts.priority ?? "user";
  return traced(async function rpcFetch(input, init) {
    let deadline = Date.now() + opts.timeoutMs;
    const methods = methodsOf(init?.body);
    const retries = methods.every((m) => m !== "" && !NOT_RETRIED.has(m)) ? opts.retries : 0;
    for (let attempt = 0;; attempt++) {
      const waitStart = Date.now();
      const ticket = await budget?.acquire(methods, priority, init?.signal ?? undefined);
      deadline += Date.now() - waitStart;
      const left = deadline - Date.now();
      const signal = init?.signal
        ? AbortSignal.any([init.signal, AbortSignal.timeout(Math.max(1, left))])
        : AbortSignal.timeout(Math.max(1, left));
      let last = attempt >= retries;
      let retryAfter: number | null = null;
      try {
        const { res, throttled } = await inspect(await base(input, { ...init, signal }));
        // One bad header must not stall every request for hours: the pause is capped (and said).
        const asked = throttled?.retryAfterMs ?? null;
        const capped = asked !== null && asked > MAX_RETRY_AFTER_MS;
        if (throttled) {
          opts.throttleLog?.note({
            ...throttled,
            methods,
            ...(capped ? { retryAfterMs: MAX_RETRY_AFTER_MS, cappedFromMs: asked } : {}),
          });
        }
        if (throttled?.kind === "429") {
          retryAfter = asked === null
            ? backoff * 2 ** attempt
            : Math.min(asked, MAX_RETRY_AFTER_MS);
          // Everyone holds back for the RPC's pause, not only this call.
          budget?.pauseFor(retryAfter);
          // A 429 was refused before it reached the node, so even a send may go again; a
          // background call (with a budget to hold it back) keeps trying within its time.
          if (priority === "background" && budget) last = false;
          if (last && priority === "user") {
            await res.body?.cancel();
            throw new RpcBusyError(retryAfter, "the RPC is rate limiting us");
          }
        }
        if (last || (res.status < 500 && res.status !== 429 && throttled?.kind !== "-32005")) {
          return res;
        }
        await res.body?.cancel();
      } catch (e) {
        if (e instanceof RpcBusyError || init?.signal?.aborted) throw e;
        if (last || Date.now() >= deadline) throw timeoutAware(e, opts.timeoutMs);
      } finally {
        ticket?.done();
      }
      // After a 429 the budget holds the next attempt back; without one we wait here.
      const pause = retryAfter === null ? backoff * 2 ** attempt : budget ? 1 : retryAfter;
      if (Date.now() + pause >= deadline) {
        if (retryAfter !== null && priority === "user") {
          throw new RpcBusyError(retryAfter, "the RPC is rate limiting us");
        }
        throw new Error(`RPC call timed out after ${opts.timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, pause));
    }
  });
}

/** The JSON-RPC method of each call in the body ("" where unreadable). */
function methodsOf(body: BodyInit | null | undefined): string[] {
  if (typeof body !== "string") return [""];
  try {
    const msg = JSON.parse(body);
    const calls: { method?: unknown }[] = Array.isArray(msg) ? msg : [msg];
    const methods = calls.map((c) => typeof c?.method === "string" ? c.method : "");
    return methods.length ? methods : [""];
  } catch {
    return [""];
  }
}

interface Inspected {
  /** The answer, still readable (its body may have been read to look for -32005). */
  res: Response;
  throttled: { kind: "429" | "-32005"; retryAfterMs: number | null } | null;
}

/** Looks for a 429, or a JSON-RPC -32005 (node unhealthy / behind) under any status. */
async function inspect(res: Response): Promise<Inspected> {
  const retryAfter = retryAfterMs(res.headers.get("retry-after"));
  if (res.status === 429) return { res, throttled: { kind: "429", retryAfterMs: retryAfter } };
  if (!(res.headers.get("content-type") ?? "").includes("json")) return { res, throttled: null };
  const text = await res.text();
  const again = new Response(text, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
  if (!text.includes("-32005")) return { res: again, throttled: null };
  try {
    const parsed = JSON.parse(text);
    const answers: { error?: { code?: unknown } }[] = Array.isArray(parsed) ? parsed : [parsed];
    if (answers.some((a) => a?.error?.code === -32005)) {
      return { res: again, throttled: { kind: "-32005", retryAfterMs: retryAfter } };
    }
  } catch { /* not JSON after all: handed on as it is */ }
  return { res: again, throttled: null };
}

/** Seconds or an HTTP date, as RFC 9110 allows; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function timeoutAware(e: unknown, timeoutMs: number): unknown {
  if (e instanceof DOMException && e.name === "TimeoutError") {
    return new Error(`RPC call timed out after ${timeoutMs} ms`);
  }
  return e;
}
