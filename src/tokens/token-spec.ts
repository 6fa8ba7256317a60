import type { PublicKey } from "@solana/web3.js";

/** What a token's plan says under either token program: who pays and receives, and the token. */
export interface TokenSpec {
  payer: PublicKey;
  recipient: PublicKey;
  seed: string;
  name: string;
  symbol: string;
  uri: string;
  decimals: number;
  supplyRaw: bigint;
  revokeMint: boolean;
  revokeFreeze: boolean;
  immutableMetadata: boolean;
  /**
   * Rent-exempt minimum of the mint: 82 bytes for the classic program; for Token-2022 its size
   * after the metadata realloc (see token2022Sizes).
   */
  mintRentLamports: bigint;
}
