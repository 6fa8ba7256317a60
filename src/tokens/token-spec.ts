import type { PublicKey } from "@solana/web3.js";
import type { BuildRequest } from "./request-schema.ts";

/**
 * The token a build makes, as its request names it: the one list the plan the transaction is
 * compiled from and the draft the TokenBuilt event records both take (the event writes the supply
 * as decimal digits, the plan keeps the bigint).
 */
export interface TokenFields<Supply> {
  name: string;
  symbol: string;
  uri: string;
  decimals: number;
  supplyRaw: Supply;
  revokeMint: boolean;
  revokeFreeze: boolean;
  immutableMetadata: boolean;
  /** Who receives each authority in the creating transaction (base58); absent: the payer. */
  mintAuthority?: string;
  freezeAuthority?: string;
  updateAuthority?: string;
}

export function tokenFields<Supply>(
  req: BuildRequest,
  supply: (raw: bigint) => Supply,
): TokenFields<Supply> {
  return {
    name: req.name,
    symbol: req.symbol,
    uri: req.metadataUri,
    decimals: req.decimals,
    supplyRaw: supply(req.supplyRaw),
    revokeMint: req.revokeMint,
    revokeFreeze: req.revokeFreeze,
    immutableMetadata: req.immutableMetadata,
    // Only when asked, so a build without them records what it always did.
    ...(req.mintAuthority ? { mintAuthority: req.mintAuthority } : {}),
    ...(req.freezeAuthority ? { freezeAuthority: req.freezeAuthority } : {}),
    ...(req.updateAuthority ? { updateAuthority: req.updateAuthority } : {}),
  };
}

/** What a token's plan says under either token program: who pays and receives, and the token. */
export interface TokenSpec extends TokenFields<bigint> {
  payer: PublicKey;
  recipient: PublicKey;
  seed: string;
  /**
   * Rent-exempt minimum of the mint: 82 bytes for the classic program; for Token-2022 its size
   * after the metadata realloc (see token2022Sizes).
   */
  mintRentLamports: bigint;
}
