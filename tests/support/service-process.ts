/**
 * The service as an operator runs it (`src/main.ts` in its own process, its KV a file under
 * DATA_DIR), for tests and benchmarks that kill it: `kill9()` is a crash, `start` again on the
 * same DATA_DIR is the restart. Talking to it goes through `httpClient`, the same user flows as
 * the in-process client.
 */
import { Connection } from "@solana/web3.js";
import type { Booted } from "../../src/bootstrap.ts";
import { type AppClient, appClient } from "./app-client.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface ServiceProcess {
  url: string;
  /** The embedded chain's JSON-RPC URL from the ready line, when the service runs one. */
  chainUrl: string | null;
  pid: number;
  /** performance.now() when the ready line was printed (read). */
  readyAt: number;
  /** SIGKILL: no shutdown, no flush, exactly what a crash leaves behind. */
  kill9(): Promise<void>;
  /** SIGTERM and wait; the exit code and what it printed on stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
  stderr(): string;
}

export async function startServiceProcess(opts: {
  dataDir: string;
  env: Record<string, string>;
  timeoutMs?: number;
}): Promise<ServiceProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", "src/main.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1", PORT: "0", LOG_LEVEL: "warn", DATA_DIR: opts.dataDir, ...opts.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const errDone = (async () => {
    for await (const t of child.stderr.pipeThrough(new TextDecoderStream())) {
      stderr = (stderr + t).slice(-20_000);
    }
  })();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  let url: string | null = null;
  let pending = reader.read();
  while (!url && Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = await Promise.race([
      pending,
      new Promise<null>((r) => (timer = setTimeout(() => r(null), 1_000))),
    ]);
    clearTimeout(timer);
    if (next === null) continue; // still waiting: keep the same read, so no output is lost
    if (next.done) break;
    out += next.value;
    url = /ready on (http:\/\/\S+)/.exec(out)?.[1] ?? null;
    pending = reader.read();
  }
  const readyAt = performance.now();
  // Keep stdout drained for the life of the process.
  const outDone = (async () => {
    try {
      if (!(await pending).done) { for (;;) if ((await reader.read()).done) break; }
    } catch { /* closed */ }
  })();
  if (!url) {
    if (!exited) child.kill("SIGKILL");
    await status;
    await errDone;
    throw new Error(`service not ready; stdout: ${out}\nstderr: ${stderr.slice(-3000)}`);
  }
  const finish = async () => {
    await status;
    await Promise.all([errDone, outDone]);
  };
  return {
    url,
    chainUrl: /ready on \S+ \(embedded chain (http:\/\/\S+)\)/.exec(out)?.[1] ?? null,
    pid: child.pid,
    readyAt,
    async kill9() {
      if (!exited) child.kill("SIGKILL");
      await finish();
    },
    async stop() {
      if (!exited) child.kill("SIGTERM");
      const t = setTimeout(() => !exited && child.kill("SIGKILL"), 15_000);
      const s = await status;
      clearTimeout(t);
      await finish();
      return { code: s.code, stderr };
    },
    stderr: () => stderr,
  };
}

/**
 * The user flows of `AppClient` against a service over HTTP, sending transactions to `rpcUrl`
 * (the chain's own process).
 */
export function httpClient(url: string, rpcUrl: string): AppClient {
  const over = {
    app: { request: (input: string, init?: RequestInit) => fetch(input, init) },
    services: { connection: new Connection(rpcUrl, "confirmed") },
  };
  return appClient(over as unknown as Booted, url, { confirmPolls: 1_500 });
}
