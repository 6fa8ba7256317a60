/**
 * The ceiling: a bare Hono route on this machine, measured exactly like the API figures
 * (in-process app.fetch with the same concurrency, and loopback HTTP with the worker client).
 */
import { Hono } from "hono";
import { loadInWorker, serveOnLoopback } from "../lib/http-load.ts";
import type { SectionResult } from "../lib/report.ts";
import { closedLoop } from "../lib/stats.ts";

export interface BareCeiling {
  /** Requests/s of GET /ping through app.fetch, in-process. */
  inProcess: number;
  /** Requests/s of GET /ping over loopback HTTP. */
  loopback: number;
  /** Requests/s over loopback for a body of `bytesSize` (the hosted-image ceiling). */
  loopbackBytes: number;
  bytesSize: number;
}

export const IN_PROCESS_CONCURRENCY = 16;
export const LOOPBACK_CONCURRENCY = 32;

export async function inProcessRate(
  fetcher: (req: Request) => Response | Promise<Response>,
  makeRequest: (i: number) => Request,
  durationMs: number,
  concurrency = IN_PROCESS_CONCURRENCY,
) {
  // A short warm-up so the JIT has seen the path before we time it.
  await closedLoop(async (i) => {
    await (await fetcher(makeRequest(i))).arrayBuffer();
  }, { concurrency, durationMs: Math.min(300, durationMs / 3) });
  const statuses: Record<number, number> = {};
  const r = await closedLoop(async (i) => {
    const res = await fetcher(makeRequest(i));
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }, { concurrency, durationMs });
  return { perSecond: r.latencies.length / (r.wallMs / 1000), statuses, errors: r.errors };
}

export async function bareHono(
  opts: { durationMs: number; bytesSize: number },
): Promise<SectionResult & { ceiling: BareCeiling }> {
  const body = new Uint8Array(opts.bytesSize);
  const app = new Hono()
    .get("/ping", (c) => c.json({ ok: true }))
    .get("/bytes", (c) => c.body(body, 200, { "Content-Type": "image/png" }));
  const inProc = await inProcessRate(
    (r) => app.fetch(r),
    () => new Request("http://bench.local/ping"),
    opts.durationMs,
  );
  const served = serveOnLoopback((r) => app.fetch(r));
  try {
    const loop = await loadInWorker({
      urls: [`${served.url}/ping`],
      concurrency: LOOPBACK_CONCURRENCY,
      durationMs: opts.durationMs,
    });
    const bytes = await loadInWorker({
      urls: [`${served.url}/bytes`],
      concurrency: LOOPBACK_CONCURRENCY,
      durationMs: opts.durationMs,
    });
    const ceiling: BareCeiling = {
      inProcess: inProc.perSecond,
      loopback: loop.perSecond,
      loopbackBytes: bytes.perSecond,
      bytesSize: opts.bytesSize,
    };
    return {
      ceiling,
      raw: { inProcess: inProc, loopback: loop, loopbackBytes: bytes },
      rows: [
        {
          area: "bare Hono",
          figure: "GET /ping req/s, in-process app.fetch",
          value: inProc.perSecond,
          unit: "/s",
          ofBare: 1,
          note: `${IN_PROCESS_CONCURRENCY} in flight`,
        },
        {
          area: "bare Hono",
          figure: "GET /ping req/s, loopback HTTP",
          value: loop.perSecond,
          unit: "/s",
          ofBare: 1,
          note: `${LOOPBACK_CONCURRENCY} connections, client in a worker`,
        },
        {
          area: "bare Hono",
          figure: `GET ${Math.round(opts.bytesSize / 1024)} KiB body req/s, loopback`,
          value: bytes.perSecond,
          unit: "/s",
          ofBare: 1,
          note: "ceiling for hosted image 200s",
        },
      ],
    };
  } finally {
    await served.close();
  }
}
