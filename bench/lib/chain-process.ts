/**
 * The embedded chain in its own process, as an RPC node is in a real deployment:
 * `deno run -A src/chain/main.ts` on a free port (CHAIN_PORT=0), driven through its HTTP
 * `/admin/` routes (airdrops, slots, state). It still simulates and executes every transaction
 * on litesvm; it only no longer shares the service's event loop.
 */
import { peakRssMiB } from "./stats.ts";

export interface ChainProcess {
  /** http://127.0.0.1:<port> */
  url: string;
  wsUrl: string;
  pid: number;
  pythSolUsdAccount: string;
  slotMs: number | "manual";
  /** POST /admin/airdrop: a faucet transfer, recorded by the chain like any transaction. */
  airdrop(address: string, lamports: bigint): Promise<string>;
  /** POST /admin/slots. */
  advanceSlots(n: number): Promise<void>;
  /** GET /admin/state. */
  state(): Promise<Record<string, unknown>>;
  /** CPU seconds (user + system) the chain process has used so far; null off Linux. */
  cpuSeconds(): number | null;
  peakRssMiB(): number | null;
  close(): Promise<void>;
}

const repoRoot = new URL("../../", import.meta.url).pathname;

export async function startChainProcess(
  opts: { slotMs?: number | "manual"; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ChainProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "src/chain/main.ts"],
    cwd: repoRoot,
    env: {
      NO_COLOR: "1",
      CHAIN_PORT: "0",
      CHAIN_SLOT_MS: String(opts.slotMs ?? 400),
      ...opts.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  // Keep both pipes drained for the life of the process; keep a tail for error messages.
  let tail = "";
  const keep = (s: string) => (tail = (tail + s).slice(-4_000));
  let onLine: ((line: string) => void) | undefined;
  const drain = async (stream: ReadableStream<Uint8Array>, lines: boolean) => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of stream) {
      const s = dec.decode(chunk, { stream: true });
      keep(s);
      if (!lines) continue;
      buf += s;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        onLine?.(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
  };
  const drained = Promise.all([drain(child.stdout, true), drain(child.stderr, false)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });

  const timeoutMs = opts.timeoutMs ?? 60_000;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`chain process not ready in ${timeoutMs} ms: ${tail}`)),
      timeoutMs,
    );
    onLine = (line) => {
      const m = /ready at (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    status.then((s) => {
      clearTimeout(timer);
      reject(new Error(`chain process exited with ${s.code} before it was ready: ${tail}`));
    });
  }).catch(async (e) => {
    if (!exited) child.kill("SIGKILL");
    await status;
    throw e;
  });

  const admin = async (path: string, body?: unknown) => {
    const res = await fetch(`${url}/admin/${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? undefined : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`chain /admin/${path}: ${res.status} ${json?.error}`);
    return json as Record<string, unknown>;
  };

  const first = await admin("state");
  const port = Number(new URL(url).port);
  let peak: number | null = null;
  const rssTimer = setInterval(() => {
    const v = peakRssMiB(child.pid);
    if (v !== null) peak = Math.max(peak ?? 0, v);
  }, 250);

  return {
    url,
    wsUrl: `ws://127.0.0.1:${port + 1}`,
    pid: child.pid,
    pythSolUsdAccount: String(first.pythSolUsdAccount),
    slotMs: first.slotMs as number | "manual",
    async airdrop(address, lamports) {
      const r = await admin("airdrop", { address, lamports: lamports.toString() });
      return String(r.signature);
    },
    async advanceSlots(n) {
      await admin("slots", { advance: n });
    },
    state: () => admin("state"),
    cpuSeconds: () => cpuSeconds(child.pid),
    peakRssMiB: () => peak,
    async close() {
      clearInterval(rssTimer);
      if (!exited) {
        try {
          child.kill("SIGTERM");
        } catch { /* already gone */ }
        const t = setTimeout(() => !exited && child.kill("SIGKILL"), 5_000);
        await status;
        clearTimeout(t);
      }
      await drained;
    },
  };
}

/** utime + stime of a process from /proc/<pid>/stat, in seconds (USER_HZ = 100). */
export function cpuSeconds(pid: number | "self"): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
