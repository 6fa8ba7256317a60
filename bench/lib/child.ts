/** Runs a Deno script in a child process and watches its peak RSS from /proc. */
import { peakRssMiB } from "./stats.ts";

export interface ChildRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
  /** Highest VmHWM seen while it ran (sampled every 100 ms), MiB; null off Linux. */
  peakRssMiB: number | null;
}

export async function runDeno(
  args: string[],
  opts: { env?: Record<string, string>; echoStderr?: boolean } = {},
): Promise<ChildRun> {
  const cmd = new Deno.Command(Deno.execPath(), {
    args,
    env: { NO_COLOR: "1", ...opts.env },
    stdout: "piped",
    stderr: "piped",
  });
  const t0 = performance.now();
  const child = cmd.spawn();
  let peak: number | null = null;
  const timer = setInterval(() => {
    const v = peakRssMiB(child.pid);
    if (v !== null) peak = Math.max(peak ?? 0, v);
  }, 100);
  const [out, err, status] = await Promise.all([
    new Response(child.stdout).text(),
    opts.echoStderr ? echo(child.stderr) : new Response(child.stderr).text(),
    child.status,
  ]);
  clearInterval(timer);
  return {
    code: status.code,
    stdout: out,
    stderr: err,
    ms: performance.now() - t0,
    peakRssMiB: peak,
  };
}

async function echo(stream: ReadableStream<Uint8Array>): Promise<string> {
  let all = "";
  const dec = new TextDecoder();
  for await (const chunk of stream) {
    const s = dec.decode(chunk, { stream: true });
    all += s;
    Deno.stderr.writeSync(new TextEncoder().encode(s));
  }
  return all;
}

/** The last line of stdout that parses as JSON. */
export function lastJson<T>(out: string): T {
  const lines = out.trim().split("\n").reverse();
  for (const l of lines) {
    try {
      return JSON.parse(l) as T;
    } catch { /* not JSON */ }
  }
  throw new Error(`no JSON in child output: ${out.slice(-500)}`);
}
