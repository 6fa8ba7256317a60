/**
 * The build's second pure step: what the chain said in the one round trip (the accounts, the fee
 * market, the simulation) against the plan. Either the error the caller gets, or the verdict:
 * the compute budget, the costs, and then the sealed transaction with the event to append and
 * the answer to give. No I/O: the shell (build-token.ts) hashes the message and commits.
 *
 * The order of the checks is the caller's: what the caller can fix comes first (payer and
 * recipient), then the balance, then the simulation's verdict.
 */
import type { AccountInfo, Message, SimulatedTransactionResponse } from "@solana/web3.js";
import { ApiError } from "../kernel/errors.ts";
import { describeTransactionError, failureSummary } from "../solana/transaction-error.ts";
import type { BuildPlan, BuildSettings } from "./build-plan.ts";
import type { BuildResponse } from "./build-response.ts";
import {
  breakdownStrings,
  type CostBreakdown,
  costBreakdown,
  costsView,
  priorityFeeLamports,
  priorityPrice,
  shortfall,
  spend,
  unitLimitFromSimulation,
} from "./costs.ts";
import type { BuildDraft } from "./decide.ts";
import { payerProblem, recipientProblem } from "./recipient.ts";
import { retarget, toBase64 } from "./transaction.ts";
import { NONCE_LIFETIME, nonceAccountProblem, nonceSimulationProblem } from "./nonce.ts";
import { storedNonce } from "../solana/nonce-account.ts";

/**
 * A blockhash is valid for 150 blocks; at ~400 ms a slot that is about 60 s, which is what the
 * contract promises. The exact end is `lastValidBlockHeight`.
 */
export const EXPIRES_IN_SECONDS = 60;

export interface Blockhash {
  blockhash: string;
  lastValidBlockHeight: number;
}

/**
 * What the message's recent blockhash is and until when it holds: a recent blockhash and its
 * last valid block height, or a durable nonce (null: it holds until the nonce moves on).
 */
export interface Lifetime {
  blockhash: string;
  lastValidBlockHeight: number | null;
}

/** What the round trip read, in the order the plan asked for it. */
export interface ChainFacts {
  /** The plan's `accounts`, in order (null: no account there). */
  accounts: (Pick<AccountInfo<Uint8Array>, "owner" | "executable" | "lamports" | "data"> | null)[];
  recentFees: readonly { prioritizationFee: number }[];
  simulation: Pick<SimulatedTransactionResponse, "err" | "logs" | "unitsConsumed">;
}

/** The build goes ahead: its compute budget and what it costs the payer. */
export interface Verdict {
  unitLimit: number;
  microLamports: bigint;
  costs: CostBreakdown;
  /** The blockhash the simulation ran with; null when the node did not say. */
  blockhash: Blockhash | null;
  /** The durable nonce the message uses instead (the nonce account's, as read); null: none. */
  nonce: string | null;
}

export function judgeBuild(
  p: BuildPlan,
  facts: ChainFacts,
  settings: Pick<BuildSettings, "maxPriorityFeeMicroLamports" | "airdropRpc">,
): Verdict | ApiError {
  const { req } = p.shape;
  const nonceAt = p.nonceAccount ? p.accounts.length - 1 : null;
  const baseCount = p.accounts.length - p.authorities.length - (nonceAt === null ? 0 : 1);
  const sameRecipient = baseCount === 2;
  const payerAccount = facts.accounts[0];
  const recipientAccount = sameRecipient ? payerAccount : facts.accounts[1];
  const tokenAccount = facts.accounts[baseCount - 1];
  const fields: Record<string, string> = {};
  p.authorities.forEach((field, i) => {
    const bad = recipientProblem(p.accounts[baseCount + i], facts.accounts[baseCount + i]);
    if (bad) fields[field] = bad.replace("should own the tokens", "should hold the authority");
  });
  const payerBad = payerProblem(
    payerAccount && { ...payerAccount, dataLength: payerAccount.data.length },
  );
  if (payerBad) fields.payer = payerBad;
  const nonceBad = nonceAt === null
    ? null
    : nonceAccountProblem(facts.accounts[nonceAt], req.payer);
  if (nonceBad) fields.nonceAccount = nonceBad;
  if (!sameRecipient) {
    const bad = recipientProblem(req.recipient, recipientAccount);
    if (bad) fields.recipient = bad;
  }
  if (Object.keys(fields).length) {
    return new ApiError("invalid_request", "Request is invalid", fields);
  }

  const sim = facts.simulation;
  const microLamports = priorityPrice(facts.recentFees, settings.maxPriorityFeeMicroLamports);
  const balance = BigInt(payerAccount?.lamports ?? 0);
  // The balance before the simulation's verdict: a payer short of the costs would only see the
  // simulation fail with a vaguer message. A failed simulation sizes nothing, so the fallback
  // limit stands in, and `needed` is never less than what a top-up to it would then be asked for.
  // A payer holding exactly the spend simulates (without the priority fee) to a balance of that
  // fee, below the rent-exempt minimum, so that simulation fails only the runtime's rent check
  // on the payer; the transaction handed out, priority fee included, leaves exactly 0 and lands.
  const payerRentOnly = sim.err !== null && onlyPayerRentShort(sim.err);
  const unitLimit = unitLimitFromSimulation(
    !sim.err || payerRentOnly ? sim.unitsConsumed : null,
  );
  const costs = costBreakdown(
    p.plan.feeLamports,
    p.rent,
    priorityFeeLamports(unitLimit, microLamports),
    BigInt(tokenAccount?.lamports ?? 0),
  );
  const short = shortfall(balance, costs);
  if (short) {
    return insufficient(short.needed, balance, costs, req.payer.toBase58(), settings.airdropRpc);
  }

  const nonceSimBad = nonceAt === null ? null : nonceSimulationProblem(sim.err);
  if (nonceSimBad) {
    return new ApiError("invalid_request", "Request is invalid", { nonceAccount: nonceSimBad });
  }
  if (sim.err && !(payerRentOnly && balance === spend(costs))) {
    return simulationFailed(p.probe.message, sim.err, sim.logs ?? []);
  }
  const nonce = nonceAt === null ? null : storedNonce(facts.accounts[nonceAt])!.nonce;
  return { unitLimit, microLamports, costs, blockhash: replacementBlockhash(sim), nonce };
}

/** The 400 for a simulation that failed: the instruction that did, by its program, and the logs. */
export function simulationFailed(
  message: Message,
  err: NonNullable<SimulatedTransactionResponse["err"]>,
  logs: string[],
): ApiError {
  const failed = describeTransactionError(err, (i) => {
    const ix = message.instructions[i];
    return ix ? message.accountKeys[ix.programIdIndex]?.toBase58() ?? null : null;
  }, logs);
  return new ApiError(
    "simulation_failed",
    `The network simulation says this transaction would fail; nothing was built: ${
      failureSummary(failed)
    }`,
    { instruction: failed, error: err, logs },
  );
}

/** The transaction handed out: the simulated message with its three placeholders filled in. */
export function sealBuild(p: BuildPlan, v: Verdict, latest: Lifetime) {
  return retarget(
    p.probe,
    { unitLimit: v.unitLimit, microLamportsPerUnit: v.microLamports },
    latest.blockhash,
  );
}

/** What the sealed build records and answers; `respond` takes the id the commit allocates. */
export interface Built {
  draft: BuildDraft;
  respond: (buildId: number) => BuildResponse;
}

export function builtToken(
  p: BuildPlan,
  v: Verdict,
  latest: Lifetime,
  sealed: { wire: Uint8Array; messageHash: string },
): Built {
  const { shape, plan } = p;
  const { req, transferFee, vanityTries } = shape;
  const token2022 = shape.tokenProgram === "token-2022";
  const draft: BuildDraft = {
    mint: plan.mint.toBase58(),
    seed: shape.seed,
    reference: shape.reference.toBase58(),
    payer: req.payer.toBase58(),
    recipient: req.recipient.toBase58(),
    recipientTokenAccount: plan.recipientTokenAccount.toBase58(),
    metadataAccount: plan.metadataAccount.toBase58(),
    // The event writes the supply as decimal digits; the plan keeps the bigint.
    ...shape.fields,
    supplyRaw: shape.fields.supplyRaw.toString(),
    feeLamports: plan.feeLamports.toString(),
    feeUsd: p.feeUsd,
    solUsd: p.solUsd,
    treasury: plan.treasury.toBase58(),
    blockhash: latest.blockhash,
    lastValidBlockHeight: latest.lastValidBlockHeight,
    messageHash: sealed.messageHash,
    // Only when not the default, so a classic build's event is what it always was.
    ...(token2022 ? { tokenProgram: "token-2022" as const } : {}),
    ...(p.nonceAccount ? { nonceAccount: p.nonceAccount.toBase58() } : {}),
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
  const transaction = toBase64(sealed.wire);
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
    ...(latest.lastValidBlockHeight === null ? NONCE_LIFETIME : {
      lastValidBlockHeight: latest.lastValidBlockHeight,
      expiresInSeconds: EXPIRES_IN_SECONDS,
    }),
    fee: { usd: draft.feeUsd, lamports: draft.feeLamports, treasury: draft.treasury },
    costs: costsView(v.costs),
    // Only for Token-2022: a classic build's 201 is exactly what it always was.
    ...(token2022 ? { tokenProgram: "token-2022" as const } : {}),
    ...(vanityTries !== null ? { vanity: { tries: vanityTries } } : {}),
    ...(draft.nonceAccount ? { nonceAccount: draft.nonceAccount } : {}),
  });
  return { draft, respond };
}

/** `InsufficientFundsForRent` on the fee payer (account 0) and nothing else. */
function onlyPayerRentShort(err: unknown): boolean {
  const e = (err as { InsufficientFundsForRent?: { account_index?: number } } | null)
    ?.InsufficientFundsForRent;
  return typeof err === "object" && e?.account_index === 0;
}

/**
 * The blockhash a `replaceRecentBlockhash` simulation ran with (JSON-RPC `replacementBlockhash`;
 * web3.js 1.x passes the field through without declaring it).
 */
export function replacementBlockhash(value: unknown): Blockhash | null {
  const r = (value as { replacementBlockhash?: unknown }).replacementBlockhash as
    | { blockhash?: unknown; lastValidBlockHeight?: unknown }
    | null
    | undefined;
  return r && typeof r.blockhash === "string" && typeof r.lastValidBlockHeight === "number"
    ? { blockhash: r.blockhash, lastValidBlockHeight: r.lastValidBlockHeight }
    : null;
}

/**
 * What the payer is short of, and what the total is made of: the transaction's spend (the
 * build's `costs.totalLamports`) plus the rent-exempt minimum a wallet must keep, since the
 * runtime refuses to leave one between 0 and that. On a local chain, how to fund the wallet.
 */
function insufficient(
  needed: bigint,
  available: bigint,
  costs: CostBreakdown,
  payer: string,
  airdropRpc: string | null | undefined,
): ApiError {
  const v = costsView(costs);
  const fund = airdropRpc
    ? ` On the local chain, fund it with: curl -s ${airdropRpc} -H 'content-type: ` +
      `application/json' -d '{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":` +
      `["${payer}",1000000000]}'`
    : "";
  return new ApiError(
    "insufficient_funds",
    `The payer holds ${available} lamports but the build needs ${needed}: the transaction ` +
      `spends ${v.totalLamports} (service fee ${v.serviceFeeLamports}, rent ${
        costs.mintRent + costs.tokenAccountRent + costs.metadataRent
      }, Metaplex fee ${v.metadataProtocolFeeLamports}, network and priority fees ${
        costs.networkFee + costs.priorityFee
      }) and the wallet must keep ${costs.payerReserve} (payerReserve, the rent-exempt minimum ` +
      `of a wallet). ${needed - available} lamports short.${fund}`,
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
