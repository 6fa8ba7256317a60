/**
 * What the network takes per token besides our fee, for each token program: the figures
 * GET /v1/pricing shows. They are the build's own cost breakdown (costs.ts) at the cluster's rent
 * (rent.ts) and the Token-2022 sizes (token-2022.ts), with no service fee and no priority fee (that
 * one depends on the market when a build is made).
 *
 * - SPL Token: exact for every build. The sizes are fixed: the Metaplex account is allocated at
 *   its maximum whatever the name, symbol and uri.
 * - Token-2022: the mint grows with its metadata, so the figure is the most a build pays: the
 *   longest name, symbol and uri a build accepts, with a transfer fee (its extension is in the
 *   mint and in the recipient's account). A build's `costs` is exact for its own token.
 */
import { PublicKey } from "@solana/web3.js";
import { costBreakdown, spend } from "./costs.ts";
import type { RentTable } from "./rent.ts";
import { MAX_NAME_BYTES, MAX_SYMBOL_BYTES, MAX_URI_BYTES } from "../domain/onchain-text.ts";
import { token2022Rent, token2022Sizes } from "./token-2022.ts";

export interface NetworkCosts {
  splToken: bigint;
  /** At most, for any Token-2022 build (see above). */
  token2022: bigint;
}

/** The largest Token-2022 mint and recipient account a build can make. */
export function largestToken2022Sizes() {
  return token2022Sizes({
    mint: PublicKey.default,
    name: "x".repeat(MAX_NAME_BYTES),
    symbol: "x".repeat(MAX_SYMBOL_BYTES),
    uri: "x".repeat(MAX_URI_BYTES),
    // 32 bytes whoever holds it (none is stored as 32 zero bytes).
    updateAuthority: PublicKey.default,
  }, true);
}

/**
 * @param rentBySize asked only when the table has no `forSize` (an RPC that serves no Rent
 *   sysvar): the rent-exempt minimum of one data length.
 */
export async function networkCosts(
  rent: RentTable,
  rentBySize: (dataLength: number) => Promise<bigint>,
): Promise<NetworkCosts> {
  const sizes = largestToken2022Sizes();
  let minimumFor = rent.forSize;
  if (!minimumFor) {
    const lengths = [sizes.final, sizes.tokenAccount];
    const answers = await Promise.all(lengths.map(rentBySize));
    const bySize = new Map(lengths.map((n, i) => [n, answers[i]]));
    minimumFor = (n) => bySize.get(n)!;
  }
  return {
    splToken: spend(costBreakdown(0n, rent, 0n)),
    token2022: spend(costBreakdown(0n, token2022Rent(rent, sizes, minimumFor), 0n)),
  };
}
