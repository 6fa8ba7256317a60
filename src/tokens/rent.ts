/**
 * Rent-exempt minimums of the accounts a build creates. Rent parameters are fixed per cluster,
 * so they are read once per connection: the first build reads the Rent sysvar before its
 * simulation (the mint's rent is in the simulated transaction), later builds use the cache. (An
 * RPC that does not serve sysvar accounts is asked getMinimumBalanceForRentExemption by size
 * instead: build-token.ts.)
 */
import { SYSVAR_RENT_PUBKEY } from "@solana/web3.js";
import { ACCOUNT_SIZE, MINT_SIZE } from "@solana/spl-token";
import { MAX_METADATA_LEN } from "../solana/token-metadata.ts";

/** Bytes the runtime charges for every account on top of its data (`ACCOUNT_STORAGE_OVERHEAD`). */
const ACCOUNT_STORAGE_OVERHEAD = 128n;

export interface RentParams {
  lamportsPerByteYear: bigint;
  exemptionThreshold: number;
}

export interface RentTable {
  mint: bigint;
  tokenAccount: bigint;
  metadata: bigint;
  /** A data-less wallet: what the payer must keep if it keeps anything at all. */
  wallet: bigint;
}

export const RENT_SYSVAR = SYSVAR_RENT_PUBKEY;

/** `Rent { lamports_per_byte_year: u64, exemption_threshold: f64, burn_percent: u8 }`. */
export function decodeRentSysvar(data: Uint8Array): RentParams {
  if (data.length < 17) throw new Error(`rent sysvar is ${data.length} bytes, expected 17`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    lamportsPerByteYear: view.getBigUint64(0, true),
    exemptionThreshold: view.getFloat64(8, true),
  };
}

/** Same arithmetic as the runtime's `Rent::minimum_balance`. */
export function minimumBalance(p: RentParams, dataLength: number): bigint {
  const perYear = (ACCOUNT_STORAGE_OVERHEAD + BigInt(dataLength)) * p.lamportsPerByteYear;
  return BigInt(Math.floor(Number(perYear) * p.exemptionThreshold));
}

export function rentTable(p: RentParams): RentTable {
  return {
    mint: minimumBalance(p, MINT_SIZE),
    tokenAccount: minimumBalance(p, ACCOUNT_SIZE),
    metadata: minimumBalance(p, MAX_METADATA_LEN),
    wallet: minimumBalance(p, 0),
  };
}
