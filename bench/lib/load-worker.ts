/**
 * A loopback HTTP client loop in its own thread, so it does not compete with the server under
 * test for the event loop: the main thread serves, this worker hammers it.
 */
/// <reference lib="deno.worker" />
import { summarize } from "./stats.ts";

export interface LoadRequest {
  urls: string[];
  method?: string;
  /** Sent with every request (JSON, say). */
  body?: string;
  headers?: Record<string, string>;
  /** Per-URL extra headers (same index as `urls`), e.g. each URL's own API key. */
  headersPerUrl?: Record<string, string>[];
  concurrency: number;
  durationMs: number;
  warmupMs?: number;
}

export interface LoadResult {
  requests: number;
  wallMs: number;
  perSecond: number;
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  firstError?: string;
}

async function run(req: LoadRequest): Promise<LoadResult> {
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const headersFor = req.urls.map((_, i) =>
    new Headers({ ...(req.headers ?? {}), ...(req.headersPerUrl?.[i] ?? {}) })
  );
  const loop = async (until: number, record: boolean, offset: number) => {
    let i = offset;
    while (performance.now() < until) {
      const k = i++ % req.urls.length;
      const url = req.urls[k];
      const headers = headersFor[k];
      const t = performance.now();
      try {
        const res = await fetch(url, { method: req.method ?? "GET", headers, body: req.body });
        await res.arrayBuffer();
        if (record) {
          latencies.push(performance.now() - t);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        }
      } catch (e) {
        if (record) {
          errors++;
          firstError ??= String(e);
        }
      }
    }
  };
  const warm = performance.now() + (req.warmupMs ?? 300);
  await Promise.all(Array.from({ length: req.concurrency }, (_, k) => loop(warm, false, k)));
  const started = performance.now();
  const until = started + req.durationMs;
  await Promise.all(Array.from({ length: req.concurrency }, (_, k) => loop(until, true, k)));
  const wallMs = performance.now() - started;
  const s = summarize(latencies);
  return {
    requests: latencies.length,
    wallMs,
    perSecond: latencies.length / (wallMs / 1000),
    statuses,
    p50Ms: s.p50,
    p99Ms: s.p99,
    errors,
    firstError,
  };
}

self.onmessage = async (e: MessageEvent<LoadRequest>) => {
  self.postMessage(await run(e.data));
};
