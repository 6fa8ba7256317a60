/**
 * The RPC client's fetch, bounded: every JSON-RPC call finishes within one time budget, and a call
 * that is safe to repeat is retried on a network error, a timeout, a 429 or a 5xx while budget
 * remains. Without it a node that accepts the connection and never answers holds a request (and
 * the caller) forever.
 *
 * sendTransaction is never retried here: a repeat of a transaction that did land comes back as an
 * "already processed" preflight error, which would turn a success into a failure. The relay
 * re-broadcasts on its own schedule instead.
 */
import { inSpan } from "../telemetry/tracing.ts";

export interface RpcFetchOptions {
  /** The whole call, retries included. */
  timeoutMs: number;
  retries: number;
  base?: typeof fetch;
  /** First pause between attempts; doubles each time. */
  backoffMs?: number;
}

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
  return traced(async function rpcFetch(input, init) {
    const deadline = Date.now() + opts.timeoutMs;
    const retries = retriable(init?.body) ? opts.retries : 0;
    for (let attempt = 0;; attempt++) {
      const left = deadline - Date.now();
      const signal = init?.signal
        ? AbortSignal.any([init.signal, AbortSignal.timeout(Math.max(1, left))])
        : AbortSignal.timeout(Math.max(1, left));
      const last = attempt >= retries;
      try {
        const res = await base(input, { ...init, signal });
        if (last || (res.status < 500 && res.status !== 429)) return res;
        await res.body?.cancel();
      } catch (e) {
        if (init?.signal?.aborted) throw e;
        if (last || Date.now() >= deadline) throw timeoutAware(e, opts.timeoutMs);
      }
      const pause = Math.min(backoff * 2 ** attempt, deadline - Date.now());
      if (pause <= 0) throw new Error(`RPC call timed out after ${opts.timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, pause));
    }
  });
}

function retriable(body: BodyInit | null | undefined): boolean {
  if (typeof body !== "string") return false;
  try {
    const msg = JSON.parse(body);
    const calls: { method?: unknown }[] = Array.isArray(msg) ? msg : [msg];
    return calls.every((c) => typeof c.method === "string" && !NOT_RETRIED.has(c.method));
  } catch {
    return false;
  }
}

function timeoutAware(e: unknown, timeoutMs: number): unknown {
  if (e instanceof DOMException && e.name === "TimeoutError") {
    return new Error(`RPC call timed out after ${timeoutMs} ms`);
  }
  return e;
}
