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
import { type Connection, PublicKey, type RecentPrioritizationFees } from "@solana/web3.js";
import { sha256Hex } from "../kernel/hashing.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { usageProjection } from "../../projections/usage.ts";
import { payerConductProjection } from "../../projections/conduct.ts";
import { payerRefusal } from "../conduct/policy.ts";
import { secondsUntilUtcMidnight, utcDay } from "../kernel/time.ts";
import type { Rejection } from "../kernel/rejection.ts";
import { kvReads, readMany } from "../commands/read.ts";
import { ApiError } from "../kernel/errors.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { usdToLamports } from "../pricing/price-source.ts";
import { solPriceOr503 } from "../pricing/quote.ts";
import type { Services } from "../services.ts";
import { describeTransactionError, failureSummary } from "../solana/transaction-error.ts";
import {
  breakdownStrings,
  costBreakdown,
  costsView,
  priorityFeeLamports,
  priorityPrice,
  shortfall,
  spend,
  unitLimitFromSimulation,
} from "./costs.ts";
import { type BuildCall, type BuildCallState, type BuildDraft, decideBuildCall } from "./decide.ts";
import { loadBuild } from "./reads.ts";
import type { BuildResponse } from "./build-response.ts";
import type { TokenBuilt } from "../../events/types.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import { payerProblem, recipientProblem } from "./recipient.ts";
import type { BuildRequest } from "./request-schema.ts";
import {
  decodeRentSysvar,
  RENT_SIZES,
  RENT_SYSVAR,
  type RentTable,
  rentTable,
  rentTableOf,
} from "./rent.ts";
import { token2022Metadata, token2022Rent, token2022Sizes } from "./token-2022.ts";
import { tokenFields } from "./token-spec.ts";
import { grindVanitySeed, matchProbability, VanityTimeout } from "./vanity.ts";
import { vanityGateFor } from "./vanity-gate.ts";
import {
  compileToken,
  deriveAddresses,
  MAX_COMPUTE_UNIT_LIMIT,
  newReference,
  newSeed,
  retarget,
  toBase64,
  type TokenPlan,
  tokenProgramId,
} from "./transaction.ts";

/**
 * A blockhash is valid for 150 blocks; at ~400 ms a slot that is about 60 s, which is what the
 * contract promises. The exact end is `lastValidBlockHeight`.
 */
export const EXPIRES_IN_SECONDS = 60;

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

/** Rent parameters never change on a cluster; one read per connection is enough. */
const rentCache = new WeakMap<Connection, RentTable>();

/** The cluster's rent table (read once per connection, then cached). */
export async function clusterRent(s: Services): Promise<RentTable> {
  let rent = rentCache.get(s.connection);
  if (!rent) {
    rent = await readRent(s);
    rentCache.set(s.connection, rent);
  }
  return rent;
}

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

type Timed = <T>(bucket: "rpc" | "store", p: () => Promise<T>) => Promise<T>;

async function build(
  s: Services,
  caller: Caller,
  req: BuildRequest,
  opts: BuildOptions,
  timed: Timed,
): Promise<BuildResponse> {
  const now = s.clock();
  const limit = s.config.limits.tokensPerDay;
  const connection = s.connection;

  // A key already at its limit is refused before any RPC is spent on it. The authoritative check
  // is the one inside the commit below.
  const [usage, payerConduct] = await readMany(
    kvReads(s.kv),
    [
      [usageProjection, [caller.purchaseId, utcDay(now)]],
      [payerConductProjection, [req.payer.toBase58()]],
    ] as const,
  );
  if ((usage?.tokens ?? 0) >= limit) throw dailyLimit(limit, usage?.tokens ?? 0, now);
  // A wallet that landed a creation without our fee gets nothing more built, on any key.
  const refused = payerRefusal(payerConduct, s.config.conduct);
  if (refused) throw new ApiError("invalid_request", "Request is invalid", { payer: refused });

  const tokenProgram = req.tokenProgram ?? "spl-token";
  let seed = opts.seed ?? newSeed();
  let vanityTries: number | null = null;
  if (req.vanity && opts.seed === undefined) {
    // Before any RPC: a grind that runs out of time costs the caller nothing and counts nothing.
    const found = await grindVanity(s, req, tokenProgram, caller.keyId);
    seed = found.seed;
    vanityTries = found.tries;
  }
  const reference = newReference();
  const addresses = await deriveAddresses(req.payer, seed, req.recipient, tokenProgram);
  const sameRecipient = req.recipient.equals(req.payer);

  // What goes into the simulated transaction must be known before it: the rent (read once per
  // connection) and the fee (a SOL price in hand). Only a connection's first build, or one after
  // the last price reading has expired, waits on this extra round trip.
  let rent = rentCache.get(connection) ?? null;
  let price = s.price.current?.() ?? null;
  if (!rent || !price) {
    [rent, price] = await timed("rpc", () =>
      Promise.all([
        rent ?? readRent(s),
        price ?? solPriceOr503(s.price, (d) => s.logger.log("warn", "price unavailable", d)),
      ]));
    rentCache.set(connection, rent);
  }

  const feeLamports = usdToLamports(s.config.fees.tokenUsd, price.usd);
  const transferFee = req.transferFee
    ? {
      basisPoints: req.transferFee.basisPoints,
      maximum: req.transferFee.maximum,
      authority: req.transferFee.permanent ? null : req.payer,
    }
    : null;
  // Token-2022: the mint's size follows its metadata, so its rent is computed per build.
  if (tokenProgram === "token-2022") {
    rent = await timed("rpc", () => token2022RentFor(s, rent!, req, addresses.mint, !!transferFee));
  }
  const plan: TokenPlan = {
    ...addresses,
    payer: req.payer,
    recipient: req.recipient,
    seed,
    reference,
    treasury: s.treasury,
    ...tokenFields(req, (raw) => raw),
    feeLamports,
    mintRentLamports: rent.mint,
    ...(tokenProgram === "token-2022" ? { tokenProgram, transferFee } : {}),
  };
  // Simulated with the unit limit wide open (so the simulation itself never runs out), no
  // priority price (so it charges only what the balance check below covers) and a blockhash the
  // node replaces with its latest, which it returns: the transaction handed out differs from the
  // simulated one only in those three values.
  const probe = compileToken(
    plan,
    { unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit: 0n },
    PLACEHOLDER_BLOCKHASH,
  );
  // The recipient's token account too: lamports already at its address lower its rent.
  const accountKeys: PublicKey[] = sameRecipient
    ? [req.payer, addresses.recipientTokenAccount]
    : [req.payer, req.recipient, addresses.recipientTokenAccount];

  // The round trip: the accounts, the fee market and the simulation at once.
  const [accounts, recentFees, sim] = await timed("rpc", () =>
    Promise.all([
      connection.getMultipleAccountsInfo(accountKeys, "confirmed"),
      // Every account the transaction write-locks; only the payer and the treasury can have a
      // history (the rest are created by this transaction), and the treasury is the one that
      // every build contends for.
      recentPrioritizationFees(
        s,
        [
          req.payer,
          addresses.mint,
          addresses.recipientTokenAccount,
          addresses.metadataAccount,
          s.treasury,
        ].filter((k, i, all) => all.findIndex((o) => o.equals(k)) === i),
      ),
      connection.simulateTransaction(probe.transaction, {
        sigVerify: false,
        replaceRecentBlockhash: true,
        commitment: "confirmed",
      }),
    ]));

  // What the caller can fix comes first, as if nothing had been simulated.
  const payerAccount = accounts[0];
  const recipientAccount = sameRecipient ? payerAccount : accounts[1];
  const tokenAccount = accounts[accounts.length - 1];
  const fields: Record<string, string> = {};
  const payerBad = payerProblem(
    payerAccount && { ...payerAccount, dataLength: payerAccount.data.length },
  );
  if (payerBad) fields.payer = payerBad;
  if (!sameRecipient) {
    const bad = recipientProblem(req.recipient, recipientAccount);
    if (bad) fields.recipient = bad;
  }
  if (Object.keys(fields).length) {
    throw new ApiError("invalid_request", "Request is invalid", fields);
  }

  const microLamports = priorityPrice(recentFees, s.config.maxPriorityFeeMicroLamports);
  const balance = BigInt(payerAccount?.lamports ?? 0);

  // The balance before the simulation's verdict: a payer short of the costs would only see the
  // simulation fail with a vaguer message. The priority fee follows the unit limit the simulation
  // sizes; a failed simulation sizes nothing, so the fallback limit stands in, and `needed` is
  // never less than what a top-up to it would then be asked for.
  // A payer holding exactly the spend simulates (without the priority fee) to a balance of that
  // fee, below the rent-exempt minimum, so that simulation fails only the runtime's rent check
  // on the payer; the transaction handed out, priority fee included, leaves exactly 0 and lands.
  const payerRentOnly = sim.value.err !== null && onlyPayerRentShort(sim.value.err);
  const unitLimit = unitLimitFromSimulation(
    !sim.value.err || payerRentOnly ? sim.value.unitsConsumed : null,
  );
  const costs = costBreakdown(
    feeLamports,
    rent,
    priorityFeeLamports(unitLimit, microLamports),
    BigInt(tokenAccount?.lamports ?? 0),
  );
  const short = shortfall(balance, costs);
  if (short) throw insufficient(short.needed, balance, costs);

  if (sim.value.err && !(payerRentOnly && balance === spend(costs))) {
    const logs = sim.value.logs ?? [];
    const failed = describeTransactionError(sim.value.err, (i) => {
      const ix = probe.message.instructions[i];
      return ix ? probe.message.accountKeys[ix.programIdIndex]?.toBase58() ?? null : null;
    }, logs);
    throw new ApiError(
      "simulation_failed",
      `The network simulation says this transaction would fail; nothing was built: ${
        failureSummary(failed)
      }`,
      { instruction: failed, error: sim.value.err, logs },
    );
  }
  const latest = replacementBlockhash(sim.value) ??
    // A node that does not say which blockhash it used: ask for the latest (one more round trip).
    await timed("rpc", () => connection.getLatestBlockhash("confirmed"));

  // The simulated message with its three placeholders filled in, byte for byte otherwise.
  const final = retarget(
    probe,
    { unitLimit, microLamportsPerUnit: microLamports },
    latest.blockhash,
  );
  const messageHash = await sha256Hex(final.messageBytes);
  const transaction = toBase64(final.wire);
  const feeUsd = s.config.fees.tokenUsd;

  const draft: BuildDraft = {
    mint: addresses.mint.toBase58(),
    seed,
    reference: reference.toBase58(),
    payer: req.payer.toBase58(),
    recipient: req.recipient.toBase58(),
    recipientTokenAccount: addresses.recipientTokenAccount.toBase58(),
    metadataAccount: addresses.metadataAccount.toBase58(),
    ...tokenFields(req, (raw) => raw.toString()),
    feeLamports: feeLamports.toString(),
    feeUsd,
    solUsd: price.usd,
    treasury: s.treasury.toBase58(),
    blockhash: latest.blockhash,
    lastValidBlockHeight: latest.lastValidBlockHeight,
    messageHash,
    // Only when not the default, so a classic build's event is what it always was.
    ...(tokenProgram === "token-2022" ? { tokenProgram } : {}),
    ...(transferFee
      ? {
        transferFee: {
          basisPoints: transferFee.basisPoints,
          maximum: transferFee.maximum.toString(),
          authority: transferFee.authority?.toBase58() ?? null,
        },
      }
      : {}),
    ...(req.vanity && vanityTries !== null
      ? { vanity: { ...req.vanity, tries: vanityTries } }
      : {}),
  };
  const respond = (buildId: number): BuildResponse => ({
    buildId,
    mint: draft.mint,
    metadataAccount: draft.metadataAccount,
    recipientTokenAccount: draft.recipientTokenAccount,
    transaction,
    transactionEncoding: "base64",
    format: "legacy-unsigned",
    requiredSigner: draft.payer,
    recentBlockhash: latest.blockhash,
    lastValidBlockHeight: latest.lastValidBlockHeight,
    expiresInSeconds: EXPIRES_IN_SECONDS,
    fee: { usd: feeUsd, lamports: draft.feeLamports, treasury: draft.treasury },
    costs: costsView(costs),
    // Only for Token-2022: a classic build's 201 is exactly what it always was.
    ...(tokenProgram === "token-2022" ? { tokenProgram } : {}),
    ...(vanityTries !== null ? { vanity: { tries: vanityTries } } : {}),
  });

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
    stream: (_cmd, _state, [built]) => `build-${built.data.buildId}`,
    expectedVersion: "any",
    respond: ([built]) => respond(built.data.buildId),
    rejected: (r) =>
      r.rejected === "daily_limit"
        ? dailyLimit(limit, Number(r.fields?.usedToday ?? limit), now)
        : new ApiError(r.rejected, r.message, r.fields ?? {}),
  };
  const { result } = await timed(
    "store",
    () =>
      runCommand(buildCommand, {
        keyId: caller.keyId,
        purchaseId: caller.purchaseId,
        authenticated: caller,
        now,
        tokensPerDay: limit,
        conduct: s.config.conduct,
        draft,
      }, {
        store: s.store,
        clock: s.clock,
        idempotency: { scope: opts.idempotency ?? null, status: 201 },
      }),
  );
  s.logger.log("info", "token built", {
    buildId: result.buildId,
    keyId: caller.keyId,
    mint: result.mint,
    units: sim.value.unitsConsumed ?? null,
    unitLimit,
    microLamports: microLamports.toString(),
  });
  return result;
}

/**
 * The rent minimums, from the Rent sysvar; from an RPC that does not serve sysvar accounts, by
 * size (one more round trip, once per connection).
 */
async function readRent(s: Services): Promise<RentTable> {
  const sysvar = await s.connection.getAccountInfo(RENT_SYSVAR, "confirmed");
  if (sysvar) return rentTable(decodeRentSysvar(sysvar.data));
  s.logger.log("warn", "the RPC returned no Rent sysvar; asking for rent minimums by size");
  const answers = await Promise.all(
    RENT_SIZES.map((n) => s.connection.getMinimumBalanceForRentExemption(n)),
  );
  const bySize = new Map(RENT_SIZES.map((n, i) => [n, BigInt(answers[i])]));
  return rentTableOf((n) => bySize.get(n)!);
}

/** The seed whose mint matches the request's vanity pattern, or 422 vanity_timeout. */
async function grindVanity(
  s: Services,
  req: BuildRequest,
  tokenProgram: "spl-token" | "token-2022",
  keyId: string,
): Promise<{ seed: string; tries: number }> {
  const pattern = req.vanity!;
  const budgetMs = s.config.vanityBudgetMs ?? 10_000;
  const leave = vanityGateFor(s, s.config.vanityConcurrency ?? 2).enter(keyId);
  try {
    return await grindVanitySeed(req.payer, tokenProgramId(tokenProgram), pattern, { budgetMs });
  } catch (e) {
    if (!(e instanceof VanityTimeout)) throw e;
    const expected = Math.round(1 / matchProbability(pattern));
    throw new ApiError(
      "vanity_timeout",
      `No mint address matching the vanity pattern within ${budgetMs} ms (${e.tries} tries; ` +
        `about ${expected} are needed on average); nothing was built or counted`,
      { tries: e.tries, budgetMs, expectedTries: expected },
    );
  } finally {
    leave();
  }
}

/**
 * The rent table of a Token-2022 build: the mint at its final size, the recipient's account
 * with its extensions. From the sysvar's parameters when the table has them; otherwise the RPC
 * is asked for the two sizes (one more round trip, only on RPCs that serve no Rent sysvar).
 */
async function token2022RentFor(
  s: Services,
  rent: RentTable,
  req: BuildRequest,
  mint: PublicKey,
  transferFee: boolean,
): Promise<RentTable> {
  const sizes = token2022Sizes(
    token2022Metadata(mint, req.payer, tokenFields(req, (raw) => raw)),
    transferFee,
  );
  if (rent.forSize) return token2022Rent(rent, sizes, rent.forSize);
  const [mintRent, accountRent] = await Promise.all(
    [sizes.final, sizes.tokenAccount].map((n) => s.connection.getMinimumBalanceForRentExemption(n)),
  );
  const bySize = new Map([[sizes.final, BigInt(mintRent)], [
    sizes.tokenAccount,
    BigInt(accountRent),
  ]]);
  return token2022Rent(rent, sizes, (n) => bySize.get(n)!);
}

/** `InsufficientFundsForRent` on the fee payer (account 0) and nothing else. */
function onlyPayerRentShort(err: unknown): boolean {
  const e = (err as { InsufficientFundsForRent?: { account_index?: number } } | null)
    ?.InsufficientFundsForRent;
  return typeof err === "object" && e?.account_index === 0;
}

/** Any well-formed blockhash will do in a simulation whose node replaces it. */
const PLACEHOLDER_BLOCKHASH = PublicKey.default.toBase58();

/**
 * The blockhash a `replaceRecentBlockhash` simulation ran with (JSON-RPC `replacementBlockhash`;
 * web3.js 1.x passes the field through without declaring it).
 */
function replacementBlockhash(
  value: unknown,
): { blockhash: string; lastValidBlockHeight: number } | null {
  const r = (value as { replacementBlockhash?: unknown }).replacementBlockhash as
    | { blockhash?: unknown; lastValidBlockHeight?: unknown }
    | null
    | undefined;
  return r && typeof r.blockhash === "string" && typeof r.lastValidBlockHeight === "number"
    ? { blockhash: r.blockhash, lastValidBlockHeight: r.lastValidBlockHeight }
    : null;
}

/** A fee estimate is worth having but not worth failing a build for. */
async function recentPrioritizationFees(
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

function insufficient(needed: bigint, available: bigint, costs: ReturnType<typeof costBreakdown>) {
  return new ApiError(
    "insufficient_funds",
    `The payer holds ${available} lamports but the build needs ${needed} (fee plus network ` +
      `costs): ${needed - available} lamports short`,
    {
      needed: needed.toString(),
      available: available.toString(),
      shortfall: (needed - available).toString(),
      spend: spend(costs).toString(),
      breakdown: breakdownStrings(costs),
      costs: costsView(costs),
    },
  );
}

function dailyLimit(limit: number, used: number, now: number) {
  const retry = secondsUntilUtcMidnight(now);
  return new ApiError(
    "daily_limit",
    `Daily token build limit of ${limit} reached; it resets at 00:00 UTC`,
    { tokensPerDay: limit, usedToday: used, resetsInSeconds: retry },
    { "Retry-After": String(retry) },
  );
}
