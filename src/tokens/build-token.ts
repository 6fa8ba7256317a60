/**
 * The build command behind POST /v1/tokens.
 *
 * One RPC round trip, all in parallel: the payer and recipient accounts, recent prioritization
 * fees for the accounts the transaction writes, and a simulateTransaction of the very
 * instructions that will be returned, with `replaceRecentBlockhash` (the node's latest blockhash
 * comes back with the result and goes into the transaction). The simulated transaction already
 * holds the fee and the rent, so a round trip before it is needed only when those are not in
 * hand: the Rent sysvar on a connection's first build, and the SOL price when no reading younger
 * than a second is kept (a Pyth account read; a fixed price never needs one). So: one round trip,
 * at most two. Then one store commit that allocates the build id, counts the build against the
 * daily limit and appends `TokenBuilt` (with the idempotency record) atomically.
 */
import type { PublicKey, RecentPrioritizationFees } from "@solana/web3.js";
import { sha256Hex } from "../kernel/hashing.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { usageProjection } from "../../projections/usage.ts";
import { payerConductProjection } from "../../projections/conduct.ts";
import { utcDay } from "../kernel/time.ts";
import type { Rejection } from "../kernel/rejection.ts";
import { kvReads, readMany } from "../commands/read.ts";
import { ApiError } from "../kernel/errors.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import type { Services } from "../services.ts";
import { drawIds, rentAndPrice, type Timed } from "./build-inputs.ts";
import {
  admitBuild,
  type BuildPlan,
  type BuildSettings,
  planBuild,
  shapeToken,
} from "./build-plan.ts";
import {
  type Built,
  builtToken,
  judgeBuild,
  type Lifetime,
  sealBuild,
  type Verdict,
} from "./build-verdict.ts";
import { type BuildCall, type BuildCallState, decideBuildCall } from "./decide.ts";
import { loadBuild } from "./reads.ts";
import type { BuildResponse } from "./build-response.ts";
import type { TokenBuilt } from "../../events/types.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import type { BuildRequest } from "./request-schema.ts";
import { tokensPerDay } from "./tokens-per-day.ts";
import { nonceSizeProblem } from "./nonce.ts";

/** Where a build's wall time went; the benchmark separates our own work from waiting on RPC. */
export interface BuildTimings {
  totalMs: number;
  /** Wall time of each RPC round trip, in order (one entry if the build stopped after the first). */
  rpcMs: number[];
  /** The store commit (KV), including conflict retries. */
  storeMs: number;
  /** Everything else: validation, derivation, compiling, hashing. */
  ownMs: number;
}

export interface BuildOptions {
  idempotency?: IdempotencyScope | null;
  /** Called once per build, success or failure, with where the time went. */
  onTimings?: (t: BuildTimings) => void;
  /** Test seam: a fixed seed makes the mint address known in advance. */
  seed?: string;
}

/** The authenticated key (its secret's MAC too, so a rotation mid-request is seen). */
export type Caller = Pick<KeyDoc, "keyId" | "purchaseId" | "secretMac">;

export async function buildToken(
  s: Services,
  caller: Caller,
  req: BuildRequest,
  opts: BuildOptions = {},
): Promise<BuildResponse> {
  const started = performance.now();
  const rpcMs: number[] = [];
  let storeMs = 0;
  const timed = async <T>(bucket: "rpc" | "store", p: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await p();
    } finally {
      const ms = performance.now() - t;
      if (bucket === "rpc") rpcMs.push(ms);
      else storeMs += ms;
    }
  };
  try {
    return await build(s, caller, req, opts, timed);
  } finally {
    if (opts.onTimings) {
      const totalMs = performance.now() - started;
      const waited = rpcMs.reduce((a, b) => a + b, 0) + storeMs;
      opts.onTimings({ totalMs, rpcMs, storeMs, ownMs: Math.max(0, totalMs - waited) });
    }
  }
}

/** The shell around the pure steps (build-plan.ts, build-verdict.ts): every read and write. */
async function build(
  s: Services,
  caller: Caller,
  req: BuildRequest,
  opts: BuildOptions,
  timed: Timed,
): Promise<BuildResponse> {
  const now = s.clock();
  const settings: BuildSettings = {
    treasury: s.treasury,
    tokenUsd: s.config.fees.tokenUsd,
    maxPriorityFeeMicroLamports: s.config.maxPriorityFeeMicroLamports,
    airdropRpc: s.config.network === "localnet" ? s.connection.rpcEndpoint : null,
  };
  // A key already at its limit is refused before any RPC is spent on it. The authoritative check
  // is the one inside the commit below.
  const [usage, payer] = await readMany(
    kvReads(s.kv),
    [
      [usageProjection, [caller.purchaseId, utcDay(now)]],
      [payerConductProjection, [req.payer.toBase58()]],
    ] as const,
  );
  const refused = admitBuild({ usage, payer }, s.config.limits, s.config.conduct, now);
  if (refused) throw refused;

  const shape = shapeToken(req, await drawIds(s, caller.keyId, req, opts.seed));
  const { rent, price } = await rentAndPrice(s, shape, timed);
  const plan = planBuild(shape, rent, price.usd, settings);
  const oversize = plan.nonceAccount ? nonceSizeProblem(plan.probe.messageBytes.length) : null;
  if (oversize) {
    throw new ApiError("invalid_request", "Request is invalid", { nonceAccount: oversize });
  }

  const { verdict, latest, sealed, messageHash, units } = await issue(s, plan, settings, timed);
  const built = builtToken(plan, verdict, latest, { wire: sealed.wire, messageHash });
  const { result } = await timed("store", () => commitBuild(s, caller, now, built, opts));
  s.logger.log("info", "token built", {
    buildId: result.buildId,
    keyId: caller.keyId,
    mint: result.mint,
    units,
    unitLimit: verdict.unitLimit,
    microLamports: verdict.microLamports.toString(),
  });
  return result;
}

/** What one round trip and the seal give: a build's message, as a build or a refresh issues it. */
export interface Issued {
  verdict: Verdict;
  latest: Lifetime;
  sealed: ReturnType<typeof sealBuild>;
  messageHash: string;
  /** Compute units the simulation used (null: the node did not say). */
  units: number | null;
}

/**
 * The round trip (the accounts, the fee market and the simulation at once), the verdict on it and
 * the sealed message with its hash; throws the verdict's error.
 */
export async function issue(
  s: Services,
  plan: BuildPlan,
  settings: BuildSettings,
  timed: Timed,
): Promise<Issued> {
  const [accounts, recentFees, sim] = await timed("rpc", () =>
    Promise.all([
      s.connection.getMultipleAccountsInfo(plan.accounts, "confirmed"),
      recentPrioritizationFees(s, plan.writable),
      s.connection.simulateTransaction(plan.probe.transaction, {
        sigVerify: false,
        replaceRecentBlockhash: true,
        commitment: "confirmed",
      }),
    ]));
  const verdict = judgeBuild(plan, { accounts, recentFees, simulation: sim.value }, settings);
  if (verdict instanceof ApiError) throw verdict;

  // A durable nonce stands in for the blockhash; else the one the simulation ran with, or from a
  // node that does not say which blockhash it used, the latest (one more round trip).
  const latest: Lifetime = verdict.nonce !== null
    ? { blockhash: verdict.nonce, lastValidBlockHeight: null }
    : verdict.blockhash ??
      await timed("rpc", () => s.connection.getLatestBlockhash("confirmed"));
  const sealed = sealBuild(plan, verdict, latest);
  const messageHash = await sha256Hex(sealed.messageBytes);
  return { verdict, latest, sealed, messageHash, units: sim.value.unitsConsumed ?? null };
}

/**
 * One store commit: allocate the build id, count the build against the daily limit and append
 * `TokenBuilt` (with the idempotency record) atomically.
 */
function commitBuild(
  s: Services,
  caller: Caller,
  now: number,
  built: Built,
  opts: BuildOptions,
) {
  const limits = s.config.limits;
  const buildCommand: CommandHandler<
    BuildCall,
    BuildCallState,
    TokenBuilt,
    Rejection,
    BuildResponse
  > = {
    load: loadBuild,
    decide: decideBuildCall,
    // "any", not 0: the stream is new by construction (its id comes from the read above,
    // which the head guard protects), whereas the store checks an expected version
    // against a fresh read outside that guard, so a racer that took the same id would
    // surface as a StreamVersionError (500) instead of the head conflict and re-run.
    stream: (_cmd, _state, [e]) => `build-${e.data.buildId}`,
    expectedVersion: "any",
    respond: ([e]) => built.respond(e.data.buildId),
    rejected: (r) =>
      r.rejected === "daily_limit"
        ? tokensPerDay.error(limits, Number(r.fields?.usedToday ?? limits.tokensPerDay), now)
        : new ApiError(r.rejected, r.message, r.fields ?? {}),
  };
  return runCommand(buildCommand, {
    keyId: caller.keyId,
    purchaseId: caller.purchaseId,
    authenticated: caller,
    now,
    tokensPerDay: limits.tokensPerDay,
    conduct: s.config.conduct,
    draft: built.draft,
  }, {
    store: s.store,
    clock: s.clock,
    idempotency: { scope: opts.idempotency ?? null, status: 201 },
  });
}

/** A fee estimate is worth having but not worth failing a build (or an update) for. */
export async function recentPrioritizationFees(
  s: Services,
  accounts: PublicKey[],
): Promise<RecentPrioritizationFees[]> {
  try {
    return await s.connection.getRecentPrioritizationFees({ lockedWritableAccounts: accounts });
  } catch (e) {
    s.logger.log("warn", "getRecentPrioritizationFees failed; building without a priority fee", {
      error: (e as Error).message,
    });
    return [];
  }
}
