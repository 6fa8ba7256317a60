/**
 * Kill -9 cycles under mixed load: the service in its own process (KV a file under a temporary
 * DATA_DIR), the embedded chain in another; clients hosting metadata, building, relaying signed
 * builds and verifying them, every write with an Idempotency-Key. Each cycle the service is killed
 * with SIGKILL at a random moment and restarted on the same KV; a request whose outcome is unknown
 * (connection lost, a 5xx, 409 in flight) is retried with the same key until it is answered.
 *
 * Afterwards: the service is stopped, `deno task audit --verify-chain` runs on its KV, and every
 * acknowledged id is compared with the event log: an acknowledged write missing from it is lost, a
 * write recorded more often than it was acknowledged is a double count.
 */
import { Keypair, LAMPORTS_PER_SOL, VersionedTransaction } from "@solana/web3.js";
import { readEvents } from "../../events/log.ts";
import { makePng, toBase64 } from "../../tests/metadata/image/fixtures.ts";
import {
  httpClient,
  type ServiceProcess,
  startServiceProcess,
} from "../../tests/support/service-process.ts";
import type { NewApiKey } from "../../tests/support/app-client.ts";
import { startChainProcess } from "./chain-process.ts";
import { percentile } from "./stats.ts";

export interface KillCycleOptions {
  cycles: number;
  clients: number;
  /** Load before each kill: the kill lands at a random moment in its second half. */
  cycleMs: number;
  keys?: number;
  log?: (m: string) => void;
}

export interface KillCycleReport {
  cycles: number;
  clients: number;
  requests: number;
  acknowledged: { metadata: number; builds: number; relays: number };
  /** Requests whose outcome the crash made unknown, retried with the same key. */
  retried: number;
  lostAcknowledged: number;
  doubleCounts: number;
  serverErrors: number;
  /** Other 4xx answers (none expected: the limits are out of reach). */
  clientErrors: number;
  /** From the restarted service being ready until a retried request ran (past any 409), ms. */
  retryWaitMs: { median: number | null; max: number | null; samples: number };
  /** From the kill until the restarted service printed its ready line, ms. */
  restartMs: { median: number | null; max: number | null };
  audit: { code: number; summary: Record<string, unknown> | null };
  problems: string[];
}

const ROOT = new URL("../../", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

type Op = "metadata" | "build" | "relay" | "verify";

export async function runKillCycles(opts: KillCycleOptions): Promise<KillCycleReport> {
  const log = opts.log ?? (() => {});
  const chain = await startChainProcess({ slotMs: 400 });
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-reliability-" });
  const env = {
    SOLANA_RPC_URL: chain.url,
    PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
    TOKENS_PER_DAY: "100000000",
    METADATA_PER_DAY: "100000000",
    HOSTED_ITEMS_PER_KEY: "100000000",
    REQUESTS_PER_HOUR: "1000000000",
    LOG_LEVEL: "error",
  };
  let svc: ServiceProcess | null = null;
  try {
    svc = await startServiceProcess({ dataDir, env });
    // What clients see: the service's address and when it became ready; null while it is down.
    let up: { url: string; readyAt: number } | null = { url: svc.url, readyAt: svc.readyAt };

    log(`buying ${opts.keys ?? 4} API keys through the portal`);
    const keys: NewApiKey[] = [];
    for (let i = 0; i < (opts.keys ?? 4); i++) {
      const wallet = Keypair.generate();
      await chain.airdrop(wallet.publicKey.toBase58(), 100_000n * BigInt(LAMPORTS_PER_SOL));
      keys.push(await httpClient(svc.url, chain.url).newApiKey(wallet));
    }

    const stats = {
      requests: 0,
      serverErrors: 0,
      clientErrors: 0,
      retried: 0,
      waits: [] as number[],
      problems: [] as string[],
    };
    const acked = {
      metadata: new Set<string>(),
      builds: new Set<string>(),
      relays: new Set<string>(),
    };
    const relayed: { signature: string; apiKey: string }[] = [];

    /**
     * One request until it is answered: the same Idempotency-Key on every attempt. A lost
     * connection, a 5xx or a 409 in flight is an unknown outcome; it is retried. The wait after a
     * restart is measured for requests that were interrupted.
     */
    const answered = async (
      path: string,
      init: { method: string; apiKey: string; json?: unknown; idem?: string },
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      let interrupted = false;
      for (let attempt = 0;; attempt++) {
        if (attempt > 2_000) throw new Error(`${path}: no answer after 2000 attempts`);
        const target = up;
        if (!target) {
          interrupted = true;
          await sleep(50);
          continue;
        }
        const started = performance.now();
        let res: Response;
        try {
          stats.requests++;
          res = await fetch(`${target.url}${path}`, {
            method: init.method,
            headers: {
              authorization: `Bearer ${init.apiKey}`,
              ...(init.json === undefined ? {} : { "content-type": "application/json" }),
              ...(init.idem ? { "idempotency-key": init.idem } : {}),
            },
            body: init.json === undefined ? undefined : JSON.stringify(init.json),
            signal: AbortSignal.timeout(60_000),
          });
        } catch {
          interrupted = true;
          await sleep(50);
          continue;
        }
        let body: Record<string, unknown> = {};
        try {
          body = await res.json();
        } catch {
          // A connection cut in the middle of the body: as unknown as no answer.
          interrupted = true;
          continue;
        }
        if (res.status >= 500) {
          stats.serverErrors++;
          stats.problems.push(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
          interrupted = true;
          await sleep(100);
          continue;
        }
        const code = (body.error as { code?: string } | undefined)?.code;
        if (res.status === 409 && code === "idempotency_key_in_flight") {
          interrupted = true;
          await sleep(100);
          continue;
        }
        if (interrupted) {
          stats.retried++;
          // Measured only when this service instance came up after the request was cut off.
          if (up === target) stats.waits.push(Math.max(0, started - target.readyAt));
        }
        if (res.status >= 400) {
          stats.clientErrors++;
          stats.problems.push(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        }
        return { status: res.status, body };
      }
    };

    let n = 0;
    const buildBody = (k: NewApiKey) => ({
      payer: k.wallet.publicKey.toBase58(),
      name: `Crash ${++n}`,
      symbol: "CRSH",
      metadataUri: "https://example.com/m/crash.json",
      supply: "1000000",
      decimals: 6,
    });
    const build = async (k: NewApiKey) => {
      const r = await answered("/v1/tokens", {
        method: "POST",
        apiKey: k.apiKey,
        json: buildBody(k),
        idem: crypto.randomUUID(),
      });
      if (r.status === 201) acked.builds.add(String(r.body.mint));
      return r;
    };
    const ops: Record<Op, (k: NewApiKey) => Promise<void>> = {
      async metadata(k) {
        const r = await answered("/v1/metadata", {
          method: "POST",
          apiKey: k.apiKey,
          json: {
            name: `Crash ${++n}`,
            symbol: "CRSH",
            imageBase64: toBase64(makePng(2 + (n % 64), 2 + ((n >> 6) % 64))),
          },
          idem: crypto.randomUUID(),
        });
        if (r.status === 201) acked.metadata.add(String(r.body.id));
      },
      async build(k) {
        await build(k);
      },
      async relay(k) {
        const b = await build(k);
        if (b.status !== 201) return;
        const tx = VersionedTransaction.deserialize(
          Uint8Array.from(atob(String(b.body.transaction)), (c) => c.charCodeAt(0)),
        );
        tx.sign([k.wallet]);
        const r = await answered("/v1/transactions", {
          method: "POST",
          apiKey: k.apiKey,
          json: { transaction: btoa(String.fromCharCode(...tx.serialize())) },
          idem: crypto.randomUUID(),
        });
        if (r.status === 202) {
          acked.relays.add(String(r.body.signature));
          relayed.push({ signature: String(r.body.signature), apiKey: k.apiKey });
        }
      },
      async verify(k) {
        const target = relayed.length ? relayed[Math.floor(Math.random() * relayed.length)] : null;
        if (!target) return await ops.metadata(k);
        await answered(`/v1/transactions/${target.signature}`, {
          method: "GET",
          apiKey: target.apiKey,
        });
      },
    };
    const mix: Op[] = ["metadata", "metadata", "build", "build", "relay", "relay", "verify"];

    let running = true;
    const workers = Array.from({ length: opts.clients }, async (_, i) => {
      const k = keys[i % keys.length];
      while (running) {
        const op = mix[Math.floor(Math.random() * mix.length)];
        try {
          await ops[op](k);
        } catch (e) {
          stats.problems.push(`${op}: ${(e as Error).message}`);
        }
      }
    });

    const restarts: number[] = [];
    for (let c = 1; c <= opts.cycles; c++) {
      await sleep(opts.cycleMs / 2 + Math.random() * opts.cycleMs / 2);
      log(`cycle ${c}/${opts.cycles}: kill -9 after ${stats.requests} requests`);
      up = null;
      const killedAt = performance.now();
      await svc.kill9();
      svc = await startServiceProcess({ dataDir, env });
      restarts.push(svc.readyAt - killedAt);
      up = { url: svc.url, readyAt: svc.readyAt };
    }
    // Load on the last instance a while, so every retry is answered, then let clients finish.
    await sleep(opts.cycleMs / 2);
    running = false;
    await Promise.all(workers);
    log(`load done: ${stats.requests} requests; stopping the service`);
    const stopped = await svc.stop();
    svc = null;
    if (stopped.code !== 0) stats.problems.push(`service stop: exit ${stopped.code}`);

    log("audit --verify-chain");
    const kvPath = `${dataDir}/kv.sqlite3`;
    const audit = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-net",
        "--unstable-kv",
        "src/cli/audit.ts",
        "--kv",
        kvPath,
        "--out",
        `${dataDir}/audit`,
        "--verify-chain",
      ],
      cwd: ROOT,
      env: { NO_COLOR: "1", SOLANA_RPC_URL: chain.url },
      stdout: "piped",
      stderr: "piped",
    }).output();
    let summary: Record<string, unknown> | null = null;
    try {
      summary = JSON.parse(new TextDecoder().decode(audit.stdout).trim().split("\n").at(-1)!);
    } catch {
      stats.problems.push(`audit: ${new TextDecoder().decode(audit.stderr).slice(-500)}`);
    }

    const { lost, doubles } = await compare(kvPath, acked);
    return {
      cycles: opts.cycles,
      clients: opts.clients,
      requests: stats.requests,
      acknowledged: {
        metadata: acked.metadata.size,
        builds: acked.builds.size,
        relays: acked.relays.size,
      },
      retried: stats.retried,
      lostAcknowledged: lost.length,
      doubleCounts: doubles,
      serverErrors: stats.serverErrors,
      clientErrors: stats.clientErrors,
      retryWaitMs: {
        median: stats.waits.length ? percentile(sorted(stats.waits), 50) : null,
        max: stats.waits.length ? Math.max(...stats.waits) : null,
        samples: stats.waits.length,
      },
      restartMs: {
        median: restarts.length ? percentile(sorted(restarts), 50) : null,
        max: restarts.length ? Math.max(...restarts) : null,
      },
      audit: { code: audit.code, summary },
      problems: [...lost.map((id) => `lost: ${id}`), ...stats.problems].slice(0, 20),
    };
  } finally {
    await svc?.kill9().catch(() => {});
    await chain.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

/**
 * Every acknowledged id against the event log: missing is lost; an id recorded more than once,
 * or a write recorded that no client was ever told about, is a double count (every request is
 * retried until it is answered, so each write the service committed was acknowledged once). A
 * relay is recorded by its submission, or, when the watcher saw the transaction land before a
 * retried relay was answered, by that landing (the retry then sends and records nothing new).
 */
async function compare(
  kvPath: string,
  acked: { metadata: Set<string>; builds: Set<string>; relays: Set<string> },
) {
  const kv = await Deno.openKv(kvPath);
  const seen = {
    metadata: new Map<string, number>(),
    builds: new Map<string, number>(),
    relays: new Map<string, number>(),
  };
  const landed = new Set<string>();
  const bump = (m: Map<string, number>, id: string) => m.set(id, (m.get(id) ?? 0) + 1);
  try {
    for await (const ev of readEvents(kv)) {
      if (ev.type === "MetadataHosted") bump(seen.metadata, ev.data.id);
      if (ev.type === "TokenBuilt") bump(seen.builds, ev.data.mint);
      if (ev.type === "TransactionSubmitted" && ev.data.via === "relay") {
        bump(seen.relays, ev.data.signature);
      }
      if (
        (ev.type === "TransactionSubmitted" || ev.type === "CreationConfirmed" ||
          ev.type === "CreationFailed" || ev.type === "CreationUnverified") && ev.data.signature
      ) landed.add(ev.data.signature);
    }
  } finally {
    kv.close();
  }
  const lost: string[] = [];
  let doubles = 0;
  for (const kind of ["metadata", "builds", "relays"] as const) {
    for (const id of acked[kind]) {
      if (!seen[kind].has(id) && !(kind === "relays" && landed.has(id))) lost.push(`${kind} ${id}`);
    }
    for (const [id, count] of seen[kind]) {
      doubles += count - 1;
      if (!acked[kind].has(id)) doubles++;
    }
  }
  return { lost, doubles };
}
