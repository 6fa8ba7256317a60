/**
 * Memory under hostile load: the service in its own process (as an operator runs it), 32
 * concurrent bodies of the largest size each limit allows sent to every POST route in the route
 * table, in the shapes that cost the most to refuse or to accept. Its peak resident memory
 * (VmHWM, started again at each round) must stay under MEMORY_BOUND_MIB (Deno Deploy isolates
 * have 512 MB); a body past its limit is refused while it streams in.
 */
import { Keypair, LAMPORTS_PER_SOL } from "@solana/web3.js";
import { startChainProcess } from "../../bench/lib/chain-process.ts";
import { peakRssMiB } from "../../bench/lib/stats.ts";
import { bootstrap } from "../../src/bootstrap.ts";
import { loadConfig } from "../../src/config.ts";
import { DEFAULT_BODY_LIMIT, METADATA_BODY_LIMIT } from "../../src/http/body-limit.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";
import { FixedPriceSource } from "../../src/pricing/price-source.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { httpClient, startServiceProcess } from "../support/service-process.ts";
import { TEST_PEPPER } from "../support/harness.ts";

const MEMORY_BOUND_MIB = 400;
const PARALLEL = 32;
const ADMIN_TOKEN = "admin-token-for-the-memory-test-0123456789";

/** The POST routes, from the route table of the app the service builds. */
async function postRoutes(
  rpcUrl: string,
  pyth: string,
): Promise<{ method: string; path: string }[]> {
  const kv = await Deno.openKv(":memory:");
  const config = loadConfig({
    SOLANA_RPC_URL: rpcUrl,
    KEY_PEPPER: TEST_PEPPER,
    PYTH_SOL_USD_ACCOUNT: pyth,
    ADMIN_TOKEN,
  });
  const booted = await bootstrap(config, {
    kv,
    logger: memoryLogger(),
    price: new FixedPriceSource(150, Date.now),
  });
  try {
    const seen = new Set<string>();
    const out: { method: string; path: string }[] = [];
    for (const r of booted.app.routes) {
      if (r.method !== "POST" || r.path.includes("*")) continue;
      const id = `${r.method} ${r.path}`;
      if (!seen.has(id)) out.push({ method: r.method, path: r.path });
      seen.add(id);
    }
    return out;
  } finally {
    await booted.close();
  }
}

const limitOf = (path: string) =>
  path === "/v1/metadata" ? METADATA_BODY_LIMIT : DEFAULT_BODY_LIMIT;

/** `{"u0000001":0,...}` filled to exactly `size` bytes. */
function unknownMembers(size: number): string {
  const parts: string[] = [];
  let n = 2;
  for (let i = 0; n + 13 <= size; i++) {
    const p = `"u${String(i).padStart(7, "0")}":0`;
    parts.push(p);
    n += p.length + 1;
  }
  return pad(`{${parts.join(",")}}`, size);
}

/** One known array member with as many elements as fit. */
function longArray(member: string, size: number): string {
  const head = `{"${member}":[`;
  const count = Math.floor((size - head.length - 2) / 2);
  return pad(`${head}${"0,".repeat(count - 1)}0]}`, size);
}

/** One string member as long as fits. */
function longString(member: string, size: number): string {
  const head = `{"${member}":"`;
  return `${head}${"A".repeat(size - head.length - 2)}"}`;
}

/** Whitespace after the JSON text brings it to exactly `size` bytes. */
const pad = (json: string, size: number) => json + " ".repeat(Math.max(0, size - json.length));

Deno.test("32 concurrent bodies of the largest size on every POST keep the service under 400 MiB resident, and a body past its limit is refused as it streams", async () => {
  const chain = await startChainProcess({ slotMs: 100 });
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-memory-" });
  const svc = await startServiceProcess({
    dataDir,
    env: {
      SOLANA_RPC_URL: chain.url,
      PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
      REQUESTS_PER_HOUR: "1000000",
      PORTAL_REQUESTS_PER_HOUR: "1000000",
      METADATA_PER_DAY: "100000",
      ADMIN_TOKEN,
    },
  });
  try {
    const routes = await postRoutes(chain.url, chain.pythSolUsdAccount);
    // Several keys: each holds at most one of the large-body places, so one key would not fill them.
    const keys: { apiKey: string; cookie: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const wallet = Keypair.generate();
      await chain.airdrop(wallet.publicKey.toBase58(), 10n * BigInt(LAMPORTS_PER_SOL));
      keys.push(await httpClient(svc.url, chain.url).newApiKey(wallet));
    }
    const k = keys[0];
    const idleMiB = rssMiB(svc.pid);
    const image = toBase64(makePng(64, 64, 1_040_000));

    const shapes = (path: string): [string, string][] => {
      const size = limitOf(path);
      const out: [string, string][] = [
        ["unknown members", unknownMembers(size)],
        ["long array", longArray(path === "/v1/metadata" ? "attributes" : "names", size)],
        ["long string", longString(path === "/v1/metadata" ? "imageBase64" : "name", size)],
      ];
      if (path === "/v1/metadata") {
        out.push([
          "valid, 1 MB image",
          JSON.stringify({ name: "Big", symbol: "BIG", imageBase64: image }),
        ]);
      }
      return out;
    };
    // Logging out ends the session the other portal routes use: it goes last.
    routes.sort((a, b) => Number(a.path.endsWith("/logout")) - Number(b.path.endsWith("/logout")));
    const report: string[] = [];
    let peak = 0;
    for (const r of routes) {
      const path = r.path.replace(/:[A-Za-z]+/g, "00000000000000000000000000000000");
      const auth = (i: number) =>
        path.startsWith("/admin")
          ? { authorization: `Bearer ${ADMIN_TOKEN}` }
          : bearer(keys[i % keys.length].apiKey);
      for (const [shape, body] of shapes(r.path)) {
        resetPeak(svc.pid);
        const statuses = await Promise.all(
          Array.from({ length: PARALLEL }, async (_, i) => {
            const res = await fetch(svc.url + path, {
              method: r.method,
              headers: {
                ...auth(i),
                cookie: k.cookie,
                "content-type": "application/json",
                ...(i % 2 ? {} : { "idempotency-key": crypto.randomUUID() }),
              },
              body,
            });
            const t = await res.text();
            return `${res.status} ${t.slice(0, 100)}`;
          }),
        );
        // Every body is within its limit: an answer, never a 413 or a fault.
        for (const st of statuses) {
          const code = Number(st.slice(0, 3));
          assert(code < 500 && code !== 413, `${r.path} ${shape}: ${st}`);
          if (shape.startsWith("valid")) assertEquals(code, 201, st);
        }
        const p = peakRssMiB(svc.pid)!;
        peak = Math.max(peak, p);
        report.push(
          `${p.toFixed(1)} MiB  ${r.method} ${r.path} ${shape} (${body.length} B): ${
            [...new Set(statuses)].join(" | ").slice(0, 200)
          }`,
        );
      }
    }
    assert(routes.some((r) => r.path === "/v1/metadata") && routes.length >= 15, "the route table");
    await refusedWhileStreaming(svc.url, k.apiKey);
    console.log(report.join("\n"));
    console.log(
      `service peak RSS ${peak.toFixed(1)} MiB (idle ${
        idleMiB.toFixed(1)
      } MiB), bound ${MEMORY_BOUND_MIB} MiB`,
    );
    assert(peak < MEMORY_BOUND_MIB, `peak RSS ${peak.toFixed(1)} MiB >= ${MEMORY_BOUND_MIB} MiB`);
  } finally {
    await svc.kill9().catch(() => {});
    await chain.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return Number(m![1]) / 1024;
}

/** Starts the process's peak (VmHWM) again from its current RSS (Linux: clear_refs 5). */
function resetPeak(pid: number) {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // Not allowed here: the peak then covers the whole run, which only makes the bound stricter.
  }
}

/**
 * A body of no declared size, far past the limit: 413 comes while it streams, having taken at
 * most the limit and what was in flight, not the whole body.
 */
async function refusedWhileStreaming(url: string, apiKey: string) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (sent >= 256 * 1024 * 1024) return ctl.close();
      sent += chunk.length;
      ctl.enqueue(chunk);
    },
  });
  const res = await fetch(`${url}/v1/metadata`, {
    method: "POST",
    headers: { ...bearer(apiKey), "content-type": "application/json" },
    body,
  }).catch((e) => e as Error);
  if (res instanceof Response) {
    assertEquals(res.status, 413);
    assertEquals((await res.json()).error.code, "payload_too_large");
  }
  // The connection is closed after the 413; the client may see that first. Either way the
  // sender stopped far short of its 256 MiB.
  assert(sent < METADATA_BODY_LIMIT + 16 * 1024 * 1024, `${sent} bytes were taken`);
}
