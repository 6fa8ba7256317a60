/**
 * What an update costs its signer, exact to the lamport: the network fee (one signature), the
 * priority fee the compute budget asks, the Token-2022 rent top-up of a longer field, and our fee
 * (UPDATE_FEE_USD; 0 by default). `totalLamports` is exactly the drop of the signer's balance.
 */
import { LAMPORTS_PER_SIGNATURE } from "./costs.ts";

export interface UpdateCosts {
  networkFeeLamports: string;
  priorityFeeLamports: string;
  rentTopUpLamports: string;
  serviceFeeLamports: string;
  totalLamports: string;
}

export function updateCosts(
  priorityFee: bigint,
  rentTopUp: bigint,
  serviceFee: bigint,
): UpdateCosts {
  const total = LAMPORTS_PER_SIGNATURE + priorityFee + rentTopUp + serviceFee;
  return {
    networkFeeLamports: LAMPORTS_PER_SIGNATURE.toString(),
    priorityFeeLamports: priorityFee.toString(),
    rentTopUpLamports: rentTopUp.toString(),
    serviceFeeLamports: serviceFee.toString(),
    totalLamports: total.toString(),
  };
}
