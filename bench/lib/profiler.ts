/**
 * A V8 CPU profile of this process through node:inspector (Deno has no --cpu-prof), reduced
 * to the functions with the most self time. Used by `deno task bench --profile=<what>` to find
 * out where a slow figure goes.
 */
import { Session } from "node:inspector/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface HotSpot {
  fn: string;
  where: string;
  selfPct: number;
}

export async function profile<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; top: HotSpot[]; byFile: HotSpot[] }> {
  const s = new Session();
  s.connect();
  await s.post("Profiler.enable");
  await s.post("Profiler.setSamplingInterval", { interval: 200 });
  await s.post("Profiler.start");
  let value: T;
  let prof: Profile;
  try {
    value = await fn();
  } finally {
    const res = (await s.post("Profiler.stop")) as unknown as { profile: Profile };
    s.disconnect();
    prof = res.profile;
  }
  const total = prof.nodes.reduce((n, x) => n + (x.hitCount ?? 0), 0) || 1;
  const byFn = new Map<string, HotSpot>();
  const byFile = new Map<string, HotSpot>();
  for (const n of prof.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits) continue;
    const url = n.callFrame.url.replace(
      /^file:\/\/.*?\/(node_modules|src|events|projections|bench|tests)\//,
      "$1/",
    );
    const where = `${url || "(native)"}:${n.callFrame.lineNumber + 1}`;
    const name = n.callFrame.functionName || "(anonymous)";
    const k = `${name} ${where}`;
    const cur = byFn.get(k) ?? { fn: name, where, selfPct: 0 };
    cur.selfPct += (100 * hits) / total;
    byFn.set(k, cur);
    const file = url.replace(/node_modules\/\.deno\/([^/]+)\/.*/, "npm:$1") || `(${name})`;
    const f = byFile.get(file) ?? { fn: "", where: file, selfPct: 0 };
    f.selfPct += (100 * hits) / total;
    byFile.set(file, f);
  }
  const sort = (m: Map<string, HotSpot>) => [...m.values()].sort((a, b) => b.selfPct - a.selfPct);
  return { value: value!, top: sort(byFn).slice(0, 25), byFile: sort(byFile).slice(0, 15) };
}

export function renderHotSpots(title: string, p: { top: HotSpot[]; byFile: HotSpot[] }): string {
  const lines = [`CPU profile: ${title} (self time)`];
  lines.push("  by function:");
  for (const h of p.top) {
    lines.push(`    ${h.selfPct.toFixed(1).padStart(5)}%  ${h.fn}  ${h.where}`);
  }
  lines.push("  by file or package:");
  for (const h of p.byFile) lines.push(`    ${h.selfPct.toFixed(1).padStart(5)}%  ${h.where}`);
  return lines.join("\n");
}
