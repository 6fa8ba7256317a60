/**
 * The API on the embedded chain: build, relay and verify (own time, sequential RPC round trips,
 * latency with 50 ms added to every RPC call, throughput), metadata upload and the hosted files.
 *
 * The service runs in this process through `startBenchHarness` (bootstrap, in-memory KV, the
 * real portal flow for keys); the embedded chain runs in its own process (`deno run -A
 * src/chain/main.ts`, reached through SOLANA_RPC_URL and driven through its /admin/ routes), as
 * an RPC node does in a deployment. The RPC client's fetch is an `RpcMeter`: per request it
 * counts calls and sequential round trips and the time spent waiting on them, and it adds the
 * injected latency. At zero added latency "waiting on RPC" is the chain process's execution
 * time plus the loopback round trip.
 */
import type { Keypair } from "@solana/web3.js";
import { bearer, decodeTx } from "../../tests/support/harness.ts";
import { type BenchHarness, startBenchHarness } from "../lib/harness.ts";
import { cpuSeconds } from "../lib/chain-process.ts";
import { makePng, toBase64 } from "../../tests/metadata/image/fixtures.ts";
import { loadInWorker, serveOnLoopback } from "../lib/http-load.ts";
import type { Row, SectionResult } from "../lib/report.ts";
import { RpcMeter } from "../lib/rpc-meter.ts";
import { closedLoop, round, summarize } from "../lib/stats.ts";
import { profile, renderHotSpots } from "../lib/profiler.ts";
import { type BuildTimings, buildToken } from "../../src/tokens/build-token.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { parseBuildRequest } from "../../src/tokens/request-schema.ts";
import { wellKnownMatcher } from "../../src/tokens/well-known-names.ts";
import {
  type BareCeiling,
  IN_PROCESS_CONCURRENCY,
  inProcessRate,
  LOOPBACK_CONCURRENCY,
} from "./bare.ts";

export interface ApiOptions {
  quick: boolean;
  durationMs: number;
  /** Sequential samples per latency figure. */
  samples: number;
  latencyMs: number;
  bare: BareCeiling;
  log: (m: string) => void;
  /** Phases to CPU-profile ("build", "verify", "hosted"); hot spots go to stderr. */
  profile: Set<string>;
}

const MiB = 1_048_576;
const URI = "https://example.com/m/0123abcd.json";

interface Sample {
  status: number;
  ms: number;
  waves: number;
  calls: number;
  ownMs: number;
  methods: Record<string, number>;
}

export async function api(opts: ApiOptions): Promise<SectionResult> {
  const meter = new RpcMeter();
  const h = await startBenchHarness({
    rpcFetch: meter.fetch,
    // 200 ms slots: a blockhash lives 30 s, long enough to pre-build a batch of relays.
    slotMs: 200,
    env: {
      TOKENS_PER_DAY: "10000000",
      METADATA_PER_DAY: "10000000",
      HOSTED_ITEMS_PER_KEY: "10000000",
      REQUESTS_PER_HOUR: "100000000",
      LOG_LEVEL: "info",
    },
  });
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  try {
    opts.log("buying API keys through the portal flow");
    const keys: Awaited<ReturnType<BenchHarness["newApiKey"]>>[] = [];
    for (let i = 0; i < 4; i++) keys.push(await h.newApiKey(await h.fundedWallet(5_000)));
    const [k0] = keys;
    const buildBody = (w: Keypair, i: number) => ({
      payer: w.publicKey.toBase58(),
      name: `Bench ${i}`,
      symbol: "BNCH",
      metadataUri: URI,
      supply: "1000000",
      decimals: 6,
    });
    const post = (path: string, apiKey: string, json: unknown) =>
      h.request(path, { method: "POST", headers: bearer(apiKey), json });

    const sample = async (fn: () => Promise<Response>): Promise<Sample & { body: unknown }> => {
      const { value: res, ms, rpc } = await meter.measure(fn);
      const body = await res.json();
      return {
        status: res.status,
        body,
        ms,
        waves: rpc.waves,
        calls: rpc.calls,
        ownMs: Math.max(0, ms - rpc.busyMs),
        methods: rpc.methods,
      };
    };
    const trimLogs = () => (h.logs.length = 0);

    // ---------------------------------------------------------------- keyed baseline
    // GET /v1/me is auth + rate limit + a read: what every keyed request pays before its work.
    for (let i = 0; i < 5; i++) {
      await (await h.request("/v1/me", { headers: bearer(k0.apiKey) })).arrayBuffer();
    }
    const me = await sequential(
      opts.samples,
      () => sample(() => h.request("/v1/me", { headers: bearer(k0.apiKey) })),
    );
    const meP = summarize(me.map((s) => s.ms));
    rows.push({
      area: "keyed",
      figure: "GET /v1/me p50 (auth + hourly counter commit + usage read)",
      value: meP.p50,
      unit: "ms",
      note: `p99 ${round(meP.p99, 2)} ms; the floor under every keyed request; RPC calls ${
        Math.max(...me.map((s) => s.calls))
      }`,
    });

    // ---------------------------------------------------------------- build
    opts.log("build: sequential, no added latency");
    for (let i = 0; i < 3; i++) {
      await sample(() => post("/v1/tokens", k0.apiKey, buildBody(k0.wallet, i)));
    }
    const build0 = await sequential(
      opts.samples,
      (i) => sample(() => post("/v1/tokens", k0.apiKey, buildBody(k0.wallet, i))),
    );
    opts.log(`build: sequential, ${opts.latencyMs} ms added per RPC call`);
    meter.latencyMs = opts.latencyMs;
    const buildLat = await sequential(
      opts.samples,
      (i) => sample(() => post("/v1/tokens", k0.apiKey, buildBody(k0.wallet, i))),
    );
    meter.latencyMs = 0;
    trimLogs();
    opts.log("build: throughput, no added latency");
    const buildReq = (i: number) => {
      const k = keys[i % keys.length];
      return new Request(`${h.base}/v1/tokens`, {
        method: "POST",
        headers: { ...bearer(k.apiKey), "content-type": "application/json" },
        body: JSON.stringify(buildBody(k.wallet, i)),
      });
    };
    const cpu0 = {
      self: cpuSeconds("self"),
      chain: h.chainProcess.cpuSeconds(),
      wall: performance.now(),
    };
    const buildIn = await maybeProfile(
      opts,
      "build",
      () => inProcessRate((r) => h.app.fetch(r), buildReq, opts.durationMs),
    );
    const cpu1 = {
      self: cpuSeconds("self"),
      chain: h.chainProcess.cpuSeconds(),
      wall: performance.now(),
    };
    // Cores each process kept busy over the loop (warm-up included), divided by the build rate:
    // CPU milliseconds per build. /proc counts in 10 ms ticks, so this is approximate.
    const cpuPerBuild = (a: number | null, b: number | null) =>
      a === null || b === null
        ? null
        : round(((b - a) / ((cpu1.wall - cpu0.wall) / 1000)) * 1000 / rate201(buildIn), 2);
    const buildCpu = {
      serviceMs: cpuPerBuild(cpu0.self, cpu1.self),
      chainMs: cpuPerBuild(cpu0.chain, cpu1.chain),
    };
    trimLogs();
    opts.log("build: the command alone (buildToken), sequential");
    const wellKnown = wellKnownMatcher(h.services.config.wellKnownNames);
    const timings: BuildTimings[] = [];
    const keyDoc = (await h.services.kv.get<KeyDoc>(projectionKey("key", [k0.keyId]))).value!;
    for (let i = 0; i < opts.samples; i++) {
      await buildToken(h.services, keyDoc, parseBuildRequest(buildBody(k0.wallet, i), wellKnown), {
        onTimings: (t) => timings.push(t),
      });
    }
    trimLogs();
    const served = serveOnLoopback((r) => h.app.fetch(r));
    let buildLoop;
    try {
      buildLoop = await loadInWorker({
        urls: keys.map(() => `${served.url}/v1/tokens`),
        method: "POST",
        headers: { "content-type": "application/json" },
        headersPerUrl: keys.map((k) => bearer(k.apiKey)),
        body: JSON.stringify(buildBody(k0.wallet, 0)),
        concurrency: IN_PROCESS_CONCURRENCY,
        durationMs: opts.durationMs,
      });
    } finally {
      await served.close();
    }
    trimLogs();
    raw.build = {
      sequential: build0.map(strip),
      latency: buildLat.map(strip),
      command: timings,
      inProcess: buildIn,
      cpuPerBuildMs: buildCpu,
      loopback: buildLoop,
    };
    rows.push(...latencyRows("build POST /v1/tokens", build0, buildLat, opts.latencyMs, 2));
    const cmdOwn = summarize(timings.map((t) => t.ownMs));
    const cmdStore = summarize(timings.map((t) => t.storeMs));
    const cmdTotal = summarize(timings.map((t) => t.totalMs));
    const httpOwn = summarize(build0.map((s) => s.ownMs));
    rows.push({
      area: "build",
      figure: "  of which: buildToken own work / store commit / HTTP+auth+rate limit",
      value: `${round(cmdOwn.p50, 2)} / ${round(cmdStore.p50, 2)} / ${
        round(Math.max(0, httpOwn.p50 - cmdOwn.p50 - cmdStore.p50), 2)
      }`,
      unit: "ms",
      note: `p50s; buildToken's onTimings; command total p50 ${round(cmdTotal.p50, 2)} ms`,
    });
    rows.push({
      area: "build",
      figure: "builds/s, no added latency, in-process",
      value: rate201(buildIn),
      unit: "/s",
      goal: ">= 150/s",
      met: rate201(buildIn) >= 150,
      ofBare: rate201(buildIn) / opts.bare.inProcess,
      note: `${IN_PROCESS_CONCURRENCY} in flight over ${keys.length} keys; statuses ${
        JSON.stringify(buildIn.statuses)
      }; CPU per build: service ${buildCpu.serviceMs} ms, chain process ${buildCpu.chainMs} ms`,
    });
    const loop201 = (buildLoop.statuses["201"] ?? 0) / (buildLoop.wallMs / 1000);
    rows.push({
      area: "build",
      figure: "builds/s, no added latency, loopback HTTP",
      value: loop201,
      unit: "/s",
      goal: ">= 150/s",
      met: loop201 >= 150,
      ofBare: loop201 / opts.bare.loopback,
      note: `${IN_PROCESS_CONCURRENCY} connections over ${keys.length} keys; statuses ${
        JSON.stringify(buildLoop.statuses)
      }`,
    });

    // ---------------------------------------------------------------- relay
    const signedBuild = async (k: typeof k0, i: number) => {
      const res = await post("/v1/tokens", k.apiKey, buildBody(k.wallet, 10_000 + i));
      const body = await res.json();
      if (res.status !== 201) {
        const errs = h.logs.filter((l) => l.includes('"error"')).slice(-2).join(" ");
        throw new Error(`build for relay failed: ${res.status} ${JSON.stringify(body)} ${errs}`);
      }
      const tx = decodeTx(body.transaction);
      tx.sign([k.wallet]);
      return btoa(String.fromCharCode(...tx.serialize()));
    };
    opts.log("relay: sequential");
    const relayed: string[] = [];
    const relayedBy: { sig: string; apiKey: string }[] = [];
    const relayOnce = async (lat: number, i: number) => {
      const transaction = await signedBuild(k0, i);
      meter.latencyMs = lat;
      try {
        const s = await sample(() => post("/v1/transactions", k0.apiKey, { transaction }));
        if (s.status === 202) relayed.push((s.body as { signature: string }).signature);
        return s;
      } finally {
        meter.latencyMs = 0;
      }
    };
    await relayOnce(0, -1);
    const relay0 = await sequential(opts.samples, (i) => relayOnce(0, i));
    const relayLat = await sequential(opts.samples, (i) => relayOnce(opts.latencyMs, 1000 + i));
    opts.log("relay: throughput");
    const batch = opts.quick ? 40 : 150;
    const pre: string[] = [];
    for (let i = 0; i < batch; i++) pre.push(await signedBuild(keys[i % keys.length], 2000 + i));
    const relayIn = await closedLoop(async (i) => {
      const k = keys[i % keys.length];
      const res = await post("/v1/transactions", k.apiKey, { transaction: pre[i] });
      const body = await res.json();
      if (res.status !== 202) {
        throw new Error(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
      relayedBy.push({ sig: body.signature, apiKey: k.apiKey });
    }, { concurrency: IN_PROCESS_CONCURRENCY, durationMs: 60_000, maxOps: batch });
    trimLogs();
    const relayRate = relayIn.latencies.length / (relayIn.wallMs / 1000);
    raw.relay = {
      sequential: relay0.map(strip),
      latency: relayLat.map(strip),
      inProcess: { ops: relayIn.latencies.length, wallMs: relayIn.wallMs, errors: relayIn.errors },
    };
    rows.push(...latencyRows("relay POST /v1/transactions", relay0, relayLat, opts.latencyMs, 2));
    rows.push({
      area: "relay",
      figure: "relays/s, no added latency, in-process",
      value: relayRate,
      unit: "/s",
      ofBare: relayRate / opts.bare.inProcess,
      note:
        `${batch} pre-built, signed transactions, ${IN_PROCESS_CONCURRENCY} in flight; ${relayIn.errors} errors${
          relayIn.firstError ? ` (${relayIn.firstError})` : ""
        }; each is simulated and executed by the chain process`,
    });

    // ---------------------------------------------------------------- verify
    opts.log("verify: waiting for the relayed transactions to land");
    for (const sig of [...relayed, ...relayedBy.map((r) => r.sig)]) {
      await h.waitForConfirmation(sig);
    }
    // Record every landing, so the throughput below is all final answers.
    for (const r of relayedBy) {
      await (await h.request(`/v1/transactions/${r.sig}`, { headers: bearer(r.apiKey) }))
        .arrayBuffer();
    }
    const verifySig = (sig: string) =>
      h.request(`/v1/transactions/${sig}`, { headers: bearer(k0.apiKey) });
    const own = relayed.slice(0, 1 + 2 * opts.samples);
    const firstHalf = own.slice(1, 1 + opts.samples);
    const secondHalf = own.slice(1 + opts.samples);
    await verifySig(own[0]);
    const verify0 = await sequential(
      firstHalf.length,
      (i) => sample(() => verifySig(firstHalf[i])),
    );
    meter.latencyMs = opts.latencyMs;
    const verifyLat = await sequential(
      secondHalf.length,
      (i) => sample(() => verifySig(secondHalf[i])),
    );
    // Final answers: these were all recorded as confirmed above, so no RPC at all.
    const verifyFinalLat = await sequential(
      opts.samples,
      (i) => sample(() => verifySig(firstHalf[i % firstHalf.length])),
    );
    meter.latencyMs = 0;
    const finalVerifyReq = (i: number) => {
      const r = relayedBy[i % relayedBy.length];
      return new Request(`${h.base}/v1/transactions/${r.sig}`, { headers: bearer(r.apiKey) });
    };
    const verifyIn = await maybeProfile(
      opts,
      "verify",
      () => inProcessRate((r) => h.app.fetch(r), finalVerifyReq, opts.durationMs),
    );
    trimLogs();
    const served2 = serveOnLoopback((r) => h.app.fetch(r));
    let verifyLoop;
    try {
      verifyLoop = await loadInWorker({
        urls: relayedBy.map((r) => `${served2.url}/v1/transactions/${r.sig}`),
        headersPerUrl: relayedBy.map((r) => bearer(r.apiKey)),
        concurrency: LOOPBACK_CONCURRENCY,
        durationMs: opts.durationMs,
      });
    } finally {
      await served2.close();
    }
    trimLogs();
    const statusesOf = (xs: (Sample & { body: unknown })[]) =>
      [...new Set(xs.map((x) => (x.body as { status?: string }).status))].join(",");
    raw.verify = {
      first: verify0.map(strip),
      latency: verifyLat.map(strip),
      final: verifyFinalLat.map(strip),
      inProcess: verifyIn,
      loopback: verifyLoop,
    };
    rows.push(
      ...latencyRows(
        "verify GET /v1/transactions/{sig} (first look)",
        verify0,
        verifyLat,
        opts.latencyMs,
        null,
      ),
    );
    const finalCalls = Math.max(...verifyFinalLat.map((s) => s.calls));
    rows.push({
      area: "verify",
      figure: "RPC calls of a final verify (already confirmed)",
      value: finalCalls,
      goal: "0",
      met: finalCalls === 0,
      note: `${verifyFinalLat.length} samples; answered status ${statusesOf(verifyFinalLat)}`,
    });
    rows.push({
      area: "verify",
      figure: `final verify p50 / p99 at ${opts.latencyMs} ms RPC latency`,
      value: `${round(summarize(verifyFinalLat.map((s) => s.ms)).p50, 2)} / ${
        round(summarize(verifyFinalLat.map((s) => s.ms)).p99, 2)
      }`,
      unit: "ms",
      note: "unaffected by RPC latency: served from the projection",
    });
    const verifyLoopOk = (verifyLoop.statuses["200"] ?? 0) / (verifyLoop.wallMs / 1000);
    rows.push({
      area: "verify",
      figure: "final verifies/s, in-process",
      value: rate(verifyIn, 200),
      unit: "/s",
      ofBare: rate(verifyIn, 200) / opts.bare.inProcess,
      note: `over ${keys.length} keys; statuses ${JSON.stringify(verifyIn.statuses)}`,
    });
    rows.push({
      area: "verify",
      figure: "final verifies/s, loopback HTTP",
      value: verifyLoopOk,
      unit: "/s",
      ofBare: verifyLoopOk / opts.bare.loopback,
      note: `statuses ${JSON.stringify(verifyLoop.statuses)}`,
    });

    // ---------------------------------------------------------------- metadata
    opts.log("metadata: 1 MiB base64 uploads");
    const meta = (imageBase64: string, i: number) =>
      post("/v1/metadata", k0.apiKey, {
        name: `Bench ${i}`,
        symbol: "BNCH",
        description: "bench",
        imageBase64,
      });
    const n = opts.samples;
    // Distinct widths make distinct images, so every upload stores a new 1 MiB image.
    const images = Array.from({ length: n + 2 }, (_, i) => toBase64(makePng(64 + i, 64, MiB)));
    for (let i = 0; i < 2; i++) await meta(images[n + i], i);
    const metaNew = await sequential(n, (i) => sample(() => meta(images[i], i)));
    const metaSame = await sequential(n, (i) => sample(() => meta(images[0], i)));
    trimLogs();
    const newP = summarize(metaNew.map((s) => s.ms));
    const sameP = summarize(metaSame.map((s) => s.ms));
    const okNew = metaNew.every((s) => s.status === 201) && metaSame.every((s) => s.status === 201);
    raw.metadata = { newImage: metaNew.map(strip), sameImage: metaSame.map(strip) };
    rows.push({
      area: "metadata",
      figure: "POST /v1/metadata, new 1 MiB base64 image, p50",
      value: newP.p50,
      unit: "ms",
      goal: "<= 30 ms",
      met: okNew && newP.p50 <= 30,
      note: `p99 ${round(newP.p99)} ms; ${n} samples; ${okNew ? "all 201" : "NOT all 201"}`,
    });
    rows.push({
      area: "metadata",
      figure: "POST /v1/metadata, same 1 MiB image again, p50",
      value: sameP.p50,
      unit: "ms",
      goal: "<= 30 ms",
      met: okNew && sameP.p50 <= 30,
      note: `p99 ${round(sameP.p99)} ms; content-addressed: chunks not rewritten`,
    });

    // ---------------------------------------------------------------- hosted files
    opts.log("hosted image: 200 and 304 paths");
    const small = makePng(120, 120, opts.bare.bytesSize);
    const hosted = await (await meta(toBase64(small), 0)).json() as { imageUri: string };
    const path = new URL(hosted.imageUri).pathname;
    const first = await h.request(path);
    const etag = first.headers.get("etag")!;
    await first.arrayBuffer();
    const imgIn200 = await maybeProfile(
      opts,
      "hosted",
      () =>
        inProcessRate(
          (r) => h.app.fetch(r),
          () => new Request(`${h.base}${path}`),
          opts.durationMs,
        ),
    );
    const imgIn304 = await inProcessRate(
      (r) => h.app.fetch(r),
      () => new Request(`${h.base}${path}`, { headers: { "if-none-match": etag } }),
      opts.durationMs,
    );
    const served3 = serveOnLoopback((r) => h.app.fetch(r));
    let img200, img304;
    try {
      img200 = await loadInWorker({
        urls: [`${served3.url}${path}`],
        concurrency: LOOPBACK_CONCURRENCY,
        durationMs: opts.durationMs,
      });
      img304 = await loadInWorker({
        urls: [`${served3.url}${path}`],
        headers: { "if-none-match": etag },
        concurrency: LOOPBACK_CONCURRENCY,
        durationMs: opts.durationMs,
      });
    } finally {
      await served3.close();
    }
    trimLogs();
    raw.hosted = {
      bytes: small.length,
      inProcess200: imgIn200,
      inProcess304: imgIn304,
      loopback200: img200,
      loopback304: img304,
    };
    const kib = Math.round(small.length / 1024);
    const l200 = (img200.statuses["200"] ?? 0) / (img200.wallMs / 1000);
    const l304 = (img304.statuses["304"] ?? 0) / (img304.wallMs / 1000);
    rows.push(
      {
        area: "hosted",
        figure: `GET /i/<id>.png 200 (${kib} KiB) req/s, in-process`,
        value: rate(imgIn200, 200),
        unit: "/s",
        ofBare: rate(imgIn200, 200) / opts.bare.inProcess,
      },
      {
        area: "hosted",
        figure: `GET /i/<id>.png 200 (${kib} KiB) req/s, loopback`,
        value: l200,
        unit: "/s",
        ofBare: l200 / opts.bare.loopbackBytes,
        note: `vs bare Hono serving the same ${kib} KiB; p99 ${round(img200.p99Ms)} ms`,
      },
      {
        area: "hosted",
        figure: "GET /i/<id>.png 304 req/s, in-process",
        value: rate(imgIn304, 304),
        unit: "/s",
        goal: ">= 3,000/s",
        met: rate(imgIn304, 304) >= 3000,
        ofBare: rate(imgIn304, 304) / opts.bare.inProcess,
      },
      {
        area: "hosted",
        figure: "GET /i/<id>.png 304 req/s, loopback",
        value: l304,
        unit: "/s",
        goal: ">= 3,000/s",
        met: l304 >= 3000,
        ofBare: l304 / opts.bare.loopback,
        note: `p99 ${round(img304.p99Ms)} ms`,
      },
    );
  } finally {
    await h.close();
  }
  return { rows, raw };
}

async function maybeProfile<T>(opts: ApiOptions, what: string, fn: () => Promise<T>): Promise<T> {
  if (!opts.profile.has(what)) return fn();
  const p = await profile(fn);
  console.error(renderHotSpots(what, p));
  return p.value;
}

async function sequential<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await fn(i));
  return out;
}

const strip = (s: Sample) => ({
  status: s.status,
  ms: s.ms,
  waves: s.waves,
  calls: s.calls,
  ownMs: s.ownMs,
});

const rate = (r: { perSecond: number; statuses: Record<number, number> }, status: number) => {
  const total = Object.values(r.statuses).reduce((a, b) => a + b, 0);
  return total === 0 ? 0 : r.perSecond * ((r.statuses[status] ?? 0) / total);
};
const rate201 = (r: { perSecond: number; statuses: Record<number, number> }) => rate(r, 201);

/** Own time, round trips and the latency figures for one endpoint. */
function latencyRows(
  what: string,
  zero: Sample[],
  lat: Sample[],
  latencyMs: number,
  /** The goal: at most this many sequential round trips (also the latency goal's multiple). */
  maxWaves: number | null,
): Row[] {
  const area = what.split(" ")[0];
  const okStatuses = [...new Set([...zero, ...lat].map((s) => s.status))];
  const own = summarize(zero.map((s) => s.ownMs));
  const all = zero.concat(lat);
  const waves = [...new Set(all.map((s) => s.waves))].sort();
  const waveShares = waves.map((w) =>
    `${w}: ${round((100 * all.filter((s) => s.waves === w).length) / all.length)}%`
  ).join(", ");
  const calls = summarize(zero.map((s) => s.calls));
  const l = summarize(lat.map((s) => s.ms));
  const z = summarize(zero.map((s) => s.ms));
  const goalMs = 2 * latencyMs + 10;
  const methods: Record<string, number> = {};
  for (const s of zero) {
    for (const [m, c] of Object.entries(s.methods)) methods[m] = (methods[m] ?? 0) + c;
  }
  const perCall = Object.entries(methods).map(([m, c]) => `${m} x${round(c / zero.length, 2)}`)
    .join(", ");
  return [
    {
      area,
      figure: `${what}: own time p50 (total minus RPC wait)`,
      value: own.p50,
      unit: "ms",
      note: `p99 ${round(own.p99, 2)} ms; total p50 ${
        round(z.p50, 2)
      } ms at 0 added latency, of which RPC wait (chain process + loopback) ${
        round(summarize(zero.map((s) => s.ms - s.ownMs)).p50, 2)
      } ms; statuses ${okStatuses.join(",")}`,
    },
    {
      area,
      figure: `${what}: sequential RPC round trips`,
      value: waves.join(","),
      goal: maxWaves === null ? undefined : `<= ${maxWaves}`,
      met: maxWaves === null ? undefined : Math.max(...waves) <= maxWaves,
      note: `of requests (${all.length}): ${waveShares}; ${
        round(calls.p50, 1)
      } calls per request: ${perCall}`,
    },
    {
      area,
      figure: `${what}: p50 / p99 at ${latencyMs} ms RPC latency`,
      value: `${round(l.p50)} / ${round(l.p99)}`,
      unit: "ms",
      goal: maxWaves === 2 ? `p50 <= ${goalMs} ms` : undefined,
      met: maxWaves === 2 ? l.p50 <= goalMs : undefined,
      note: `${lat.length} samples`,
    },
  ];
}
