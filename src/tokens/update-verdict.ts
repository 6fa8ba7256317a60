/**
 * The verdict on an update's second round trip (its simulation and the fee market), pure: the
 * compute budget, the costs to the lamport, the blockhash, or the error the caller sees
 * (insufficient_funds with the costs, simulation_failed with the logs).
 */
import type { AccountInfo, SimulatedTransactionResponse } from "@solana/web3.js";
import { ApiError } from "../kernel/errors.ts";
import { type Blockhash, replacementBlockhash, simulationFailed } from "./build-verdict.ts";
import { priorityFeeLamports, priorityPrice, unitLimitFromSimulation } from "./costs.ts";
import type { CompiledToken } from "./transaction.ts";
import { type UpdateCosts, updateCosts } from "./update-costs.ts";

/**
 * The least limit an update sets: the Metaplex update uses far less than a create, and the
 * Token-2022 field updates less still; this keeps a limit sized on one mint valid on another.
 */
export const UPDATE_CU_FLOOR = 40_000;

export interface UpdateVerdict {
  unitLimit: number;
  microLamports: bigint;
  costs: UpdateCosts;
  blockhash: Blockhash | null;
}

export interface UpdateFacts {
  authorityAccount: AccountInfo<Uint8Array> | null;
  recentFees: readonly { prioritizationFee: number }[];
  simulation: SimulatedTransactionResponse;
}

export function judgeUpdate(
  probe: CompiledToken,
  amounts: { rentTopUp: bigint; serviceFee: bigint; walletRent: bigint },
  facts: UpdateFacts,
  maxPriorityFeeMicroLamports: number,
): UpdateVerdict | ApiError {
  const sim = facts.simulation;
  const microLamports = priorityPrice(facts.recentFees, maxPriorityFeeMicroLamports);
  const units = sim.err ? null : sim.unitsConsumed;
  const unitLimit = Math.max(UPDATE_CU_FLOOR, unitLimitFromSimulation(units));
  const costs = updateCosts(
    priorityFeeLamports(unitLimit, microLamports),
    amounts.rentTopUp,
    amounts.serviceFee,
  );
  const balance = BigInt(facts.authorityAccount?.lamports ?? 0);
  const total = BigInt(costs.totalLamports);
  const needed = total + amounts.walletRent;
  if (balance !== total && balance < needed) {
    return new ApiError(
      "insufficient_funds",
      `The authority holds ${balance} lamports but the update needs ${needed}: the transaction ` +
        `spends ${total} and the wallet must keep ${amounts.walletRent} (the rent-exempt minimum ` +
        `of a wallet). ${needed - balance} lamports short.`,
      {
        needed: needed.toString(),
        available: balance.toString(),
        shortfall: (needed - balance).toString(),
        costs,
      },
    );
  }
  if (sim.err) {
    return simulationFailed(probe.message, sim.err, sim.logs ?? []);
  }
  return { unitLimit, microLamports, costs, blockhash: replacementBlockhash(sim) };
}
