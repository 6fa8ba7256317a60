/** Small numeric helpers shared by the benchmark sections. */

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export function summarize(values: number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return {
    n: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    mean,
    max: s[s.length - 1] ?? NaN,
  };
}

export const round = (x: number, digits = 1) =>
  Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x;

export const MiB = 1024 * 1024;

/** Peak resident set size of a process so far (VmHWM), in MiB; null off Linux. */
export function peakRssMiB(pid: number | "self" = "self"): number | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples Deno.memoryUsage().rss every `everyMs` until stopped; returns the largest, in MiB. */
export function rssSampler(everyMs = 50) {
  let max = Deno.memoryUsage().rss;
  const id = setInterval(() => (max = Math.max(max, Deno.memoryUsage().rss)), everyMs);
  return {
    stop(): number {
      clearInterval(id);
      max = Math.max(max, Deno.memoryUsage().rss);
      return max / MiB;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `task` from `concurrency` loops until `durationMs` passes or `maxOps` finish; returns the
 * per-op latencies (ms) and the wall time. Errors are counted, not thrown, so a bad response
 * shows in the table instead of aborting the run.
 */
export async function closedLoop(
  task: (i: number) => Promise<void>,
  opts: { concurrency: number; durationMs: number; maxOps?: number },
): Promise<{ latencies: number[]; wallMs: number; errors: number; firstError?: string }> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const started = performance.now();
  const deadline = started + opts.durationMs;
  const max = opts.maxOps ?? Infinity;
  const loop = async () => {
    while (performance.now() < deadline && next < max) {
      const i = next++;
      const t = performance.now();
      try {
        await task(i);
        latencies.push(performance.now() - t);
      } catch (e) {
        errors++;
        firstError ??= String(e instanceof Error ? e.message : e);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  return { latencies, wallMs: performance.now() - started, errors, firstError };
}
