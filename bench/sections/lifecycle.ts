/**
 * RPC calls per build lifecycle in the user-facing flows, by method, through the counting proxy
 * (`RpcMeter`) between the service and the chain process: build, relay (or the caller's own
 * send, which costs the service nothing), verify while pending, the first verify after landing
 * (reads and records the outcome), and the final verify. The watcher is not running here (its
 * cost is measured on its own), so every call counted is one a caller's request made.
 *
 * From the per-lifecycle counts: how many creations per 10 s the public endpoints' budget (100
 * requests, 40 per method) leaves room for, counting user calls only.
 */
import { Connection, Transaction } from "@solana/web3.js";
import { bearer } from "../../tests/support/harness.ts";
import { startBenchHarness } from "../lib/harness.ts";
import type { Row, SectionResult } from "../lib/report.ts";
import { RpcMeter } from "../lib/rpc-meter.ts";
import { sleep } from "../lib/stats.ts";

const URI = "https://example.com/m/lifecycle.json";

type Step = "build" | "relay" | "verify pending" | "verify landed" | "verify final";
type Counts = Record<string, number>;

export async function lifecycle(opts: {
  quick: boolean;
  log: (m: string) => void;
}): Promise<SectionResult> {
  const meter = new RpcMeter();
  // Mainnet-like slots, so a verify right after a relay sees it in flight, as callers do.
  const h = await startBenchHarness({
    rpcFetch: meter.fetch,
    slotMs: 400,
    env: { REQUESTS_PER_HOUR: "100000", TOKENS_PER_DAY: "100000", LOG_LEVEL: "warn" },
  });
  // The caller's own connection: not the service's, not counted.
  const own = new Connection(h.chainProcess.url, "confirmed");
  const runs = opts.quick ? 3 : 10;
  const seen: Record<"relay" | "own", Partial<Record<Step, Counts[]>>> = { relay: {}, own: {} };
  try {
    const { apiKey, wallet } = await h.newApiKey(await h.fundedWallet(100));
    const call = async (flow: "relay" | "own", step: Step, fn: () => Promise<Response>) => {
      const { value: res, rpc } = await meter.measure(fn);
      const body = await res.json();
      if (res.status >= 300) throw new Error(`${step}: ${res.status} ${JSON.stringify(body)}`);
      (seen[flow][step] ??= []).push(rpc.methods);
      return body;
    };
    const verify = (flow: "relay" | "own", step: Step, sig: string) =>
      call(flow, step, () => h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) }));
    const confirmed = async (sig: string) => {
      for (let i = 0; i < 300; i++) {
        const { value } = await own.getSignatureStatuses([sig]);
        const s = value[0]?.confirmationStatus;
        if (s === "confirmed" || s === "finalized") return;
        await sleep(100);
      }
      throw new Error(`${sig} not confirmed`);
    };

    for (let i = 0; i < runs * 2; i++) {
      const flow = i % 2 ? "own" : "relay";
      const built = await call(flow, "build", () =>
        h.request("/v1/tokens", {
          method: "POST",
          headers: bearer(apiKey),
          json: {
            payer: wallet.publicKey.toBase58(),
            name: `Lifecycle ${i}`,
            symbol: "LIFE",
            metadataUri: URI,
            supply: "1000000",
            decimals: 6,
          },
        }));
      const tx = Transaction.from(Uint8Array.from(atob(built.transaction), (c) => c.charCodeAt(0)));
      tx.sign(wallet);
      let sig: string;
      if (flow === "relay") {
        const wire = btoa(String.fromCharCode(...tx.serialize()));
        sig = (await call(flow, "relay", () =>
          h.request("/v1/transactions", {
            method: "POST",
            headers: bearer(apiKey),
            json: { transaction: wire },
          }))).signature;
        // Right away: in flight, not yet confirmed (one slot is 400 ms).
        const v = await verify(flow, "verify pending", sig);
        if (v.status !== "pending") seen[flow]["verify pending"]!.pop();
      } else {
        sig = await own.sendRawTransaction(tx.serialize());
      }
      await confirmed(sig);
      const landed = await verify(flow, "verify landed", sig);
      if (landed.status !== "confirmed") throw new Error(`verify: ${landed.status}`);
      await verify(flow, "verify final", sig);
    }
  } finally {
    await h.close();
  }

  const rows: Row[] = [];
  const goals: Record<Step, number> = {
    // Accounts, fee market and simulation in one round trip, plus the Pyth price read when the
    // reading in hand is older than a second.
    "build": 4,
    "relay": 3,
    "verify pending": 2,
    "verify landed": 2,
    "verify final": 0,
  };
  const lifecycleTotals: Record<string, Counts> = {};
  for (const flow of ["relay", "own"] as const) {
    const total: Counts = {};
    for (const [step, samples] of Object.entries(seen[flow]) as [Step, Counts[]][]) {
      if (!samples.length) continue;
      const mean = meanCounts(samples);
      const calls = sum(mean);
      // A relay's verify-while-pending is not part of every lifecycle: callers poll it as often
      // as they like; the lifecycle below counts one such poll.
      for (const [m, n] of Object.entries(mean)) total[m] = (total[m] ?? 0) + n;
      rows.push({
        area: "rpc lifecycle",
        figure: `${flow === "relay" ? "relayed" : "self-sent"}: ${step}, RPC calls`,
        value: calls,
        goal: goals[step] === 0 ? "0" : `<= ${goals[step]}`,
        met: calls <= goals[step],
        note: `${describe(mean)}; ${samples.length} samples`,
      });
    }
    lifecycleTotals[flow] = total;
    const calls = sum(total);
    const busiest = Math.max(...Object.values(total));
    const perWindow = Math.min(100 / calls, 40 / busiest);
    rows.push({
      area: "rpc lifecycle",
      figure: `${flow === "relay" ? "relayed" : "self-sent"}: whole lifecycle, user RPC calls`,
      value: calls,
      note: describe(total),
    });
    rows.push({
      area: "rpc lifecycle",
      figure: `${
        flow === "relay" ? "relayed" : "self-sent"
      }: creations per 10 s the public budget leaves room for (user calls only)`,
      value: round1(perWindow),
      goal: ">= 10",
      met: perWindow >= 10,
      note: `min(100 / ${round1(calls)} calls, 40 / ${round1(busiest)} of the busiest method)`,
    });
  }
  return { rows, raw: { seen, lifecycleTotals } };
}

function meanCounts(samples: Counts[]): Counts {
  const out: Counts = {};
  for (const s of samples) for (const [m, n] of Object.entries(s)) out[m] = (out[m] ?? 0) + n;
  for (const m of Object.keys(out)) out[m] = out[m] / samples.length;
  return out;
}

const sum = (c: Counts) => Object.values(c).reduce((a, b) => a + b, 0);
const round1 = (x: number) => Math.round(x * 10) / 10;
const describe = (c: Counts) =>
  Object.keys(c).length
    ? Object.entries(c).map(([m, n]) => `${m} x${round1(n)}`).join(", ")
    : "no calls";
