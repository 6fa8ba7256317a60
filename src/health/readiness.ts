/**
 * Readiness for load balancers: can this instance read Deno KV and reach the Solana RPC?
 * The RPC answer is kept for a few seconds, so a balancer polling every second costs the RPC
 * budget at most one `getSlot` per instance per window (mainnet public RPCs: 100 calls per 10 s).
 */
import { HEAD } from "../../events/keys.ts";
import type { Services } from "../services.ts";

export interface Check {
  ok: boolean;
  ms: number;
  /** Why not, when not ok (safe to show: no address or secret). */
  problem?: string;
}

export interface Readiness {
  ready: boolean;
  kv: Check;
  rpc: Check & { slot?: number; checkedAt: number };
}

/** How long a probe may take before it counts as down: well under a balancer's own timeout. */
export const PROBE_TIMEOUT_MS = 2_000;
/** How long an RPC answer is reused. */
export const RPC_CHECK_TTL_MS = 5_000;

type RpcCheck = Readiness["rpc"];

export function readinessProbe(s: Services) {
  let cached: RpcCheck | null = null;
  let inFlight: Promise<RpcCheck> | null = null;

  const rpc = async (): Promise<RpcCheck> => {
    const now = s.clock();
    if (cached && now - cached.checkedAt < RPC_CHECK_TTL_MS) return cached;
    // Concurrent probes share one call.
    inFlight ??= timed(() => s.connection.getSlot("confirmed")).then((r) => {
      cached = {
        ok: r.ok,
        ms: r.ms,
        checkedAt: s.clock(),
        ...(r.ok ? { slot: r.value } : { problem: `RPC: ${r.problem}` }),
      };
      return cached;
    }).finally(() => (inFlight = null));
    return await inFlight;
  };

  const kv = async (): Promise<Check> => {
    const r = await timed(() => s.kv.get(HEAD));
    return r.ok ? { ok: true, ms: r.ms } : { ok: false, ms: r.ms, problem: `KV: ${r.problem}` };
  };

  return async function readiness(): Promise<Readiness> {
    const [k, r] = await Promise.all([kv(), rpc()]);
    return { ready: k.ok && r.ok, kv: k, rpc: r };
  };
}

async function timed<T>(
  f: () => Promise<T>,
): Promise<{ ok: true; ms: number; value: T } | { ok: false; ms: number; problem: string }> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const value = await Promise.race([
      f(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
          PROBE_TIMEOUT_MS,
        );
      }),
    ]);
    return { ok: true, ms: Math.round(performance.now() - started), value };
  } catch (e) {
    const problem = e instanceof Error ? e.message.slice(0, 200) : String(e).slice(0, 200);
    return { ok: false, ms: Math.round(performance.now() - started), problem };
  } finally {
    clearTimeout(timer);
  }
}
