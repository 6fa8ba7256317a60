/**
 * Rent-exempt minimums of the accounts a build creates. Rent parameters are fixed per cluster,
 * so they are read once per connection: the first build reads the Rent sysvar before its
 * simulation (the mint's rent is in the simulated transaction), later builds use the cache. (An
 * RPC that does not serve sysvar accounts is asked getMinimumBalanceForRentExemption by size
 * instead: build-token.ts.)
 */
import { SYSVAR_RENT_PUBKEY } from "@solana/web3.js";
import { ACCOUNT_SIZE, MINT_SIZE } from "@solana/spl-token";
import {
  CREATE_FEE_RENT_BYTES,
  MAX_METADATA_LEN,
  metadataCreateLamports,
} from "../solana/token-metadata.ts";

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
  /** The Token Metadata program's protocol fee, which it derives from the rent (see there). */
  metadataProtocolFee: bigint;
  /** A data-less wallet: what the payer must keep if it keeps anything at all. */
  wallet: bigint;
  /**
   * Any size's minimum, when the table comes from the Rent sysvar (Token-2022 mints vary in
   * size with their metadata); absent when it was read size by size from an RPC.
   */
  forSize?: (dataLength: number) => bigint;
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

/** Every data length whose rent-exempt minimum a build's costs need. */
export const RENT_SIZES = [MINT_SIZE, ACCOUNT_SIZE, MAX_METADATA_LEN, CREATE_FEE_RENT_BYTES, 0];

/** The table from any source of rent-exempt minimums by data length (sysvar or RPC). */
export function rentTableOf(rentExemptMinimum: (dataLength: number) => bigint): RentTable {
  const metadata = metadataCreateLamports(rentExemptMinimum);
  return {
    mint: rentExemptMinimum(MINT_SIZE),
    tokenAccount: rentExemptMinimum(ACCOUNT_SIZE),
    metadata: metadata.rent,
    metadataProtocolFee: metadata.protocolFee,
    wallet: rentExemptMinimum(0),
  };
}

export function rentTable(p: RentParams): RentTable {
  const forSize = (n: number) => minimumBalance(p, n);
  return { ...rentTableOf(forSize), forSize };
}
