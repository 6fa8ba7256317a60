/**
 * The service's RPC client `fetch` (bootstrap's `rpcFetch`), instrumented: counts calls by
 * method, counts sequential round trips ("waves": the in-flight count rising from zero), sums
 * the wall time with at least one call in flight, and can add latency to every call the way a
 * distant RPC node would. With one request at a time, the figures taken around a request are
 * that request's own.
 */
import { sleep } from "./stats.ts";

export interface RpcWindow {
  calls: number;
  waves: number;
  busyMs: number;
  methods: Record<string, number>;
}

export class RpcMeter {
  latencyMs = 0;
  #inFlight = 0;
  #busySince = 0;
  #calls = 0;
  #waves = 0;
  #busyMs = 0;
  #methods: Record<string, number> = {};

  readonly fetch: typeof fetch = async (input, init) => {
    this.#calls++;
    for (const m of methodsOf(init?.body)) this.#methods[m] = (this.#methods[m] ?? 0) + 1;
    if (this.#inFlight++ === 0) {
      this.#waves++;
      this.#busySince = performance.now();
    }
    try {
      if (this.latencyMs > 0) await sleep(this.latencyMs);
      const res = await fetch(input, init);
      // Read the body here, so a round trip ends when its answer is in, as the caller sees it.
      const body = await res.arrayBuffer();
      return new Response(body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    } finally {
      if (--this.#inFlight === 0) this.#busyMs += performance.now() - this.#busySince;
    }
  };

  /** Counters since the last call to `window()` or since start. */
  window(): RpcWindow {
    const now = performance.now();
    const busy = this.#busyMs + (this.#inFlight > 0 ? now - this.#busySince : 0);
    const w = { calls: this.#calls, waves: this.#waves, busyMs: busy, methods: this.#methods };
    this.#calls = 0;
    this.#waves = 0;
    this.#busyMs = 0;
    this.#methods = {};
    if (this.#inFlight > 0) this.#busySince = now;
    return w;
  }

  /** Runs `fn` alone (nothing else should be calling the RPC) and returns its RPC figures. */
  async measure<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; rpc: RpcWindow }> {
    this.window();
    const t = performance.now();
    const value = await fn();
    const ms = performance.now() - t;
    return { value, ms, rpc: this.window() };
  }
}

function methodsOf(body: unknown): string[] {
  if (typeof body !== "string") return ["?"];
  try {
    const parsed = JSON.parse(body);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.map((r) => String(r?.method ?? "?"));
  } catch {
    return ["?"];
  }
}
