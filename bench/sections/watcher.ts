/**
 * The watcher's RPC cost, measured through the counting proxy (`RpcMeter`) between the service and
 * the embedded chain in its own process:
 *
 * - one build's lifecycle by method: build, relay, a rebroadcast after it landed, the sweep that
 *   records it, the verification;
 * - watcher calls/s with 0, 40 and 1,000 open builds, the real loop on the KV queue running and
 *   nothing else calling the RPC. Open builds are TokenBuilt events appended through the store
 *   (random addresses, a last valid block height far ahead): the watcher cannot tell them from
 *   built transactions nobody sent yet, and 1,000 of them need no 1,000 API calls;
 * - landing-to-confirmed: a build sent through the caller's own RPC, from the client seeing it
 *   confirmed to the record saying `confirmed`, with 40 other builds open.
 */
import { rebroadcast, startWatcher, sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { buildBy, buildById } from "../../src/creation/build-records.ts";
import { QueueDispatcher } from "../../src/queue.ts";
import { bearer, decodeTx } from "../../tests/support/harness.ts";
import { appendOpenBuilds } from "../../tests/support/synthetic-build.ts";
import { startBenchHarness } from "../lib/harness.ts";
import type { Row, SectionResult } from "../lib/report.ts";
import { RpcMeter, type RpcWindow } from "../lib/rpc-meter.ts";
import { round, sleep, summarize } from "../lib/stats.ts";

export interface WatcherOptions {
  quick: boolean;
  log: (m: string) => void;
}

/** The watcher's sweep interval (src/creation/watcher.ts). */
const SWEEP_MS = 2_000;

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const perMethod = (m: Record<string, number>, n = 1) =>
  Object.entries(m).sort().map(([k, v]) => `${k} x${round(v / n, 2)}`).join(", ") || "none";

export async function watcher(opts: WatcherOptions): Promise<SectionResult> {
  const meter = new RpcMeter();
  const h = await startBenchHarness({
    rpcFetch: meter.fetch,
    // Mainnet's slot time: a blockhash lives about a minute, as there.
    slotMs: 400,
    env: {
      TOKENS_PER_DAY: "10000000",
      REQUESTS_PER_HOUR: "100000000",
      LOG_LEVEL: "warn",
    },
  });
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const queue = new QueueDispatcher(h.kv, () => {});
  try {
    const k = await h.newApiKey(await h.fundedWallet(1_000));
    const c = h.services.connection;

    const buildOne = async (name: string) => {
      const res = await h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(k.apiKey),
        json: {
          payer: k.wallet.publicKey.toBase58(),
          name,
          symbol: "WCH",
          metadataUri: "https://example.com/m/watch.json",
          supply: "1000",
        },
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`build: ${res.status} ${JSON.stringify(body)}`);
      const tx = decodeTx(body.transaction);
      tx.sign([k.wallet]);
      return { mint: body.mint as string, signed: tx.serialize() };
    };
    const statusOf = async (mint: string) => (await buildBy(h.kv, "build_by_mint", mint))?.status;

    // One lifecycle, each step alone on the RPC (no watcher loop yet).
    opts.log("watcher: one build's lifecycle by method");
    const samples = opts.quick ? 2 : 5;
    const steps: Record<string, RpcWindow[]> = {};
    const add = (step: string, w: RpcWindow) => (steps[step] ??= []).push(w);
    let rebroadcastRepeats = 0;
    for (let i = 0; i < samples; i++) {
      const built = await meter.measure(() => buildOne(`Life ${i}`));
      add("build POST /v1/tokens", built.rpc);
      const transaction = b64(built.value.signed);
      const relayed = await meter.measure(async () => {
        const res = await h.request("/v1/transactions", {
          method: "POST",
          headers: bearer(k.apiKey),
          json: { transaction },
        });
        return (await res.json()).signature as string;
      });
      add("relay POST /v1/transactions", relayed.rpc);
      await h.waitForConfirmation(relayed.value);
      const buildId = (await buildBy(h.kv, "build_by_mint", built.value.mint))!.buildId;
      const again = await meter.measure(() =>
        rebroadcast(h.services, { buildId, transaction, signature: relayed.value })
      );
      add("a rebroadcast after it landed", again.rpc);
      if (again.value) rebroadcastRepeats++;
      const swept = await meter.measure(() => sweepOpenBuilds(h.services));
      add("the sweep that records it", swept.rpc);
      if (await statusOf(built.value.mint) !== "confirmed") {
        throw new Error("the sweep did not confirm the landed build");
      }
      const verified = await meter.measure(() =>
        h.request(`/v1/transactions/${relayed.value}`, { headers: bearer(k.apiKey) })
      );
      add("verify GET /v1/transactions/{sig}", verified.rpc);
    }
    // A build nobody sends: the full sweep after its blockhash expired looks it up once.
    const expiredAt = await c.getBlockHeight("confirmed");
    await appendOpenBuilds(h.services.store, 1, {
      firstId: 900_000,
      key: k,
      treasury: h.services.treasury.toBase58(),
      lastValidBlockHeight: expiredAt - 1,
      at: h.services.clock(),
    });
    const expiry = await meter.measure(() => sweepOpenBuilds(h.services));
    if ((await buildById(h.kv, 900_000))?.status !== "expired") {
      throw new Error("the full sweep did not expire the build");
    }
    let total = 0;
    for (const [step, ws] of Object.entries(steps)) {
      const calls = ws.reduce((n, w) => n + w.calls, 0) / ws.length;
      total += calls;
      const methods: Record<string, number> = {};
      for (const w of ws) {
        for (const [m, v] of Object.entries(w.methods)) methods[m] = (methods[m] ?? 0) + v;
      }
      rows.push({
        area: "watcher",
        figure: `RPC calls per build lifecycle: ${step}`,
        value: round(calls, 2),
        note: `${perMethod(methods, ws.length)}; ${ws.length} builds` +
          (step.startsWith("a rebroadcast")
            ? `; ${rebroadcastRepeats} of ${ws.length} would send again in 2 s`
            : ""),
      });
    }
    rows.push({
      area: "watcher",
      figure: "RPC calls per build lifecycle: the full sweep that expires one never sent",
      value: expiry.rpc.calls,
      note: `${perMethod(expiry.rpc.methods)}; alone, so the sweep's own calls are in it: ` +
        "the build's own part is its one reference lookup",
    });
    raw.expiry = expiry.rpc;
    rows.push({
      area: "watcher",
      figure: "RPC calls per build lifecycle: total (relayed)",
      value: round(total, 2),
      note: "plus the watcher's own sweeps, shared by every open build (below)",
    });
    raw.lifecycle = steps;

    // The real loop, on the KV queue, alone on the RPC.
    opts.log("watcher: calls/s at 0, 40 and 1,000 open builds");
    await startWatcher(h.services, queue);
    const windowMs = opts.quick ? 6_000 : 20_000;
    const height = await c.getBlockHeight("confirmed");
    let nextId = 1_000_000;
    const openBuilds = async (n: number) => {
      await appendOpenBuilds(h.services.store, n, {
        firstId: nextId,
        key: k,
        treasury: h.services.treasury.toBase58(),
        lastValidBlockHeight: height + 1_000_000,
        at: h.services.clock(),
      });
      nextId += n;
    };
    const rates: Record<string, unknown> = {};
    for (const [open, add] of [[0, 0], [40, 40], [1000, 960]] as const) {
      await openBuilds(add);
      // Let a sweep or two pass with the new builds in place before counting.
      await sleep(2 * SWEEP_MS);
      meter.window();
      await sleep(windowMs);
      const w = meter.window();
      const perS = w.calls / (windowMs / 1000);
      rates[open] = { perS, methods: w.methods };
      const goal = open === 40 ? 1 : open === 1000 ? 3 : undefined;
      rows.push({
        area: "watcher",
        figure: `watcher RPC calls/s, ${open.toLocaleString("en-US")} open builds`,
        value: round(perS, 2),
        goal: goal === undefined ? undefined : `<= ${goal}/s`,
        met: goal === undefined ? undefined : perS <= goal,
        note: `${perMethod(w.methods)} in ${windowMs / 1000} s`,
      });
    }
    raw.rates = rates;

    // Landing to confirmed in the record, the loop running, 1,000 synthetic builds still open.
    opts.log("watcher: landing-to-confirmed");
    const lags: number[] = [];
    for (let i = 0; i < (opts.quick ? 3 : 10); i++) {
      const b = await buildOne(`Lag ${i}`);
      const sig = await c.sendRawTransaction(b.signed);
      await h.waitForConfirmation(sig);
      const landed = performance.now();
      while (await statusOf(b.mint) !== "confirmed") {
        if (performance.now() - landed > 60_000) throw new Error(`${b.mint} not confirmed`);
        await sleep(25);
      }
      lags.push(performance.now() - landed);
      // Not in step with the sweep: sample the whole interval.
      await sleep(Math.random() * SWEEP_MS);
    }
    const lag = summarize(lags);
    rows.push({
      area: "watcher",
      figure: "landing to `confirmed` in the record, p50 (own RPC, watcher loop)",
      value: `${round(lag.p50, 0)} ms`,
      goal: `p50 <= ${SWEEP_MS} ms (one sweep)`,
      met: lag.p50 <= SWEEP_MS,
      note: `p90 ${round(lag.p90, 0)} ms, max ${round(lag.max, 0)} ms; ${lags.length} builds; ` +
        "1,000 other builds open",
    });
    raw.landingToConfirmedMs = lags;
  } finally {
    await queue.stop();
    await h.close();
  }
  return { rows, raw };
}
