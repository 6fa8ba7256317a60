/**
 * The process `bench/side-by-side.ts` starts: two trees' bench harnesses (each its own service in
 * this process and its own chain process), POST /v1/tokens on each in turn. Sequential builds
 * alternate A-B / B-A so neither side always runs second; bursts (16 in flight over 4 keys, as
 * the api section's in-process row) alternate too. Prints each figure for A and B and B/A.
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { summarize } from "./stats.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    a: { type: "string" },
    b: { type: "string" },
    "label-a": { type: "string", default: "A" },
    rounds: { type: "string", default: "300" },
    bursts: { type: "string", default: "5" },
  },
}).values;

const ENV = {
  TOKENS_PER_DAY: "10000000",
  METADATA_PER_DAY: "10000000",
  HOSTED_ITEMS_PER_KEY: "10000000",
  REQUESTS_PER_HOUR: "100000000",
  LOG_LEVEL: "info",
};
const URI = "https://example.com/m/0123abcd.json";
const IN_FLIGHT = 16;
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

/** One tree's service, driven through its own harness and RPC meter. */
async function side(root: string) {
  const { startBenchHarness } = await import(`${root}/bench/lib/harness.ts`);
  const { RpcMeter } = await import(`${root}/bench/lib/rpc-meter.ts`);
  const meter = new RpcMeter();
  const h = await startBenchHarness({ rpcFetch: meter.fetch, slotMs: 200, env: ENV });
  const keys: { apiKey: string; wallet: { publicKey: { toBase58(): string } } }[] = [];
  for (let i = 0; i < 4; i++) keys.push(await h.newApiKey(await h.fundedWallet(5_000)));
  let n = 0;
  const request = () => {
    const i = n++;
    const k = keys[i % keys.length];
    return new Request(`${h.base}/v1/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${k.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        payer: k.wallet.publicKey.toBase58(),
        name: `Bench ${i}`,
        symbol: "BNCH",
        metadataUri: URI,
        supply: "1000000",
        decimals: 6,
      }),
    });
  };
  const built = async (res: Response) => {
    await res.arrayBuffer();
    h.logs.length = 0;
    if (res.status !== 201) throw new Error(`${root}: build answered ${res.status}`);
  };
  return {
    /** One build alone: own time (wall minus RPC wait) and this process's CPU meanwhile. */
    async one() {
      const c0 = process.cpuUsage();
      const { value, ms, rpc } = await meter.measure(() => h.app.fetch(request()));
      await built(value);
      return { ownMs: ms - rpc.busyMs, cpuMs: cpuMs(process.cpuUsage(c0)) };
    },
    /** Builds/s with IN_FLIGHT at once for `ms`, and CPU per build. */
    async burst(ms: number) {
      const c0 = process.cpuUsage();
      const chain0 = h.chainProcess.cpuSeconds();
      const t0 = performance.now();
      let done = 0;
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() - t0 < ms) {
          await built(await h.app.fetch(request()));
          done++;
        }
      }));
      const s = (performance.now() - t0) / 1000;
      const chainMs = ((h.chainProcess.cpuSeconds() ?? 0) - (chain0 ?? 0)) * 1000 / done;
      return { perSec: done / s, cpuMs: cpuMs(process.cpuUsage(c0)) / done, chainMs };
    },
    close: () => h.close(),
  };
}

const A = await side(args.a!);
const B = await side(args.b!);
try {
  for (let i = 0; i < 60; i++) (await A.one(), await B.one());
  type Alone = { ownMs: number; cpuMs: number };
  type Burst = { perSec: number; cpuMs: number; chainMs: number };
  const seq: Record<"A" | "B", Alone[]> = { A: [], B: [] };
  for (let i = 0; i < Number(args.rounds); i++) {
    const order = i % 2 ? [["A", A], ["B", B]] as const : [["B", B], ["A", A]] as const;
    for (const [name, s] of order) seq[name].push(await s.one());
  }
  const bursts: Record<"A" | "B", Burst[]> = { A: [], B: [] };
  await A.burst(300), await B.burst(300);
  for (let i = 0; i < Number(args.bursts); i++) {
    const order = i % 2 ? [["A", A], ["B", B]] as const : [["B", B], ["A", A]] as const;
    for (const [name, s] of order) bursts[name].push(await s.burst(1_000));
  }
  const p50 = (xs: number[]) => summarize(xs).p50;
  const row = (figure: string, a: number[], b: number[], digits: number) => {
    const [ma, mb] = [p50(a), p50(b)];
    return `| ${figure} | ${ma.toFixed(digits)} | ${mb.toFixed(digits)} | ${
      (mb / ma).toFixed(3)
    } |`;
  };
  console.log(`| figure (median) | ${args["label-a"]} (A) | this tree (B) | B/A |`);
  console.log(`| --- | --- | --- | --- |`);
  console.log(
    row("build alone: own time, ms", seq.A.map((x) => x.ownMs), seq.B.map((x) => x.ownMs), 2),
  );
  console.log(
    row("build alone: service CPU, ms", seq.A.map((x) => x.cpuMs), seq.B.map((x) => x.cpuMs), 2),
  );
  console.log(
    row(
      `builds/s, ${IN_FLIGHT} in flight`,
      bursts.A.map((x) => x.perSec),
      bursts.B.map((x) => x.perSec),
      0,
    ),
  );
  console.log(
    row(
      "service CPU per build in bursts, ms",
      bursts.A.map((x) => x.cpuMs),
      bursts.B.map((x) => x.cpuMs),
      2,
    ),
  );
  console.log(
    row(
      "chain process CPU per build in bursts, ms",
      bursts.A.map((x) => x.chainMs),
      bursts.B.map((x) => x.chainMs),
      2,
    ),
  );
  console.log(`(${args.rounds} builds each alone, ${args.bursts} bursts of 1 s each)`);
} finally {
  await A.close();
  await B.close();
}
Deno.exit(0);
