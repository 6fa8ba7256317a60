/**
 * What the build reads and draws before its round trip: the seed (ground for a vanity pattern
 * when one is asked), the reference and the addresses, the cluster's rent (read once per
 * connection) and the SOL price. The shell (build-token.ts) times and calls these.
 */
import type { Connection } from "@solana/web3.js";
import { ApiError } from "../kernel/errors.ts";
import { solPriceOr503 } from "../pricing/quote.ts";
import type { Services } from "../services.ts";
import type { BuildIds, TokenShape } from "./build-plan.ts";
import type { BuildRequest } from "./request-schema.ts";
import {
  decodeRentSysvar,
  RENT_SIZES,
  RENT_SYSVAR,
  type RentTable,
  rentTable,
  rentTableOf,
} from "./rent.ts";
import { token2022Rent, type Token2022Sizes } from "./token-2022.ts";
import { grindVanitySeed, matchProbability, VanityTimeout } from "./vanity.ts";
import { vanityGateFor } from "./vanity-gate.ts";
import { deriveAddresses, newSeed, tokenProgramId } from "./transaction.ts";
import { newReference } from "../solana/reference.ts";

/** Waits on the chain, timed as RPC by the caller. */
export type Timed = <T>(bucket: "rpc" | "store", p: () => Promise<T>) => Promise<T>;

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

/**
 * The seed (ground for a vanity pattern when one is asked), the reference and the addresses.
 * `fixedSeed`: the test seam that makes the mint address known in advance (no grind).
 */
export async function drawIds(
  s: Services,
  keyId: string,
  req: BuildRequest,
  fixedSeed?: string,
): Promise<BuildIds> {
  const tokenProgram = req.tokenProgram ?? "spl-token";
  let seed = fixedSeed ?? newSeed();
  let vanityTries: number | null = null;
  if (req.vanity && fixedSeed === undefined) {
    // Before any RPC: a grind that runs out of time costs the caller nothing and counts nothing.
    const found = await grindVanity(s, req, tokenProgram, keyId);
    seed = found.seed;
    vanityTries = found.tries;
  }
  const reference = newReference();
  const addresses = await deriveAddresses(req.payer, seed, req.recipient, tokenProgram);
  return { seed, reference, addresses, vanityTries };
}

/**
 * What goes into the simulated transaction must be known before it: the rent (read once per
 * connection) and the fee (a SOL price in hand). Only a connection's first build, or one after
 * the last price reading has expired, waits on this extra round trip.
 */
export async function rentAndPrice(
  s: Services,
  shape: TokenShape,
  timed: Timed,
): Promise<{ rent: RentTable; price: { usd: number } }> {
  let rent = rentCache.get(s.connection) ?? null;
  let price = s.price.current?.() ?? null;
  if (!rent || !price) {
    [rent, price] = await timed("rpc", () =>
      Promise.all([
        rent ?? readRent(s),
        price ?? solPriceOr503(s.price, (d) => s.logger.log("warn", "price unavailable", d)),
      ]));
    rentCache.set(s.connection, rent);
  }
  // Token-2022: the mint's size follows its metadata, so its rent is computed per build.
  const sizes = shape.token2022Sizes;
  if (sizes) {
    const base = rent;
    rent = base.forSize
      ? token2022Rent(base, sizes, base.forSize)
      : await timed("rpc", () => token2022RentByRpc(s, base, sizes));
  }
  return { rent, price };
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
 * The rent table of a Token-2022 build from an RPC that serves no Rent sysvar: the RPC is asked
 * for the mint's final size and the recipient's account size (one more round trip).
 */
async function token2022RentByRpc(
  s: Services,
  rent: RentTable,
  sizes: Token2022Sizes,
): Promise<RentTable> {
  const [mintRent, accountRent] = await Promise.all(
    [sizes.final, sizes.tokenAccount].map((n) => s.connection.getMinimumBalanceForRentExemption(n)),
  );
  const bySize = new Map([[sizes.final, BigInt(mintRent)], [
    sizes.tokenAccount,
    BigInt(accountRent),
  ]]);
  return token2022Rent(rent, sizes, (n) => bySize.get(n)!);
}
