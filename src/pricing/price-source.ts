/** Where the SOL/USD price comes from. A missing or stale price is an error the API maps to 503. */
import { Connection, PublicKey } from "@solana/web3.js";
import type { Clock } from "../kernel/clock.ts";
import { decodePythPriceAccount, PYTH_ORACLE_PROGRAM_ID, type PythPrice } from "../solana/pyth.ts";
import {
  decodePriceUpdateV2,
  isPriceUpdateV2,
  PYTH_RECEIVER_PROGRAM_ID,
  PYTH_SOL_USD_FEED_ID,
} from "../solana/pyth-receiver.ts";

export interface SolPrice {
  usd: number;
  /** Unix seconds of the publication. */
  publishTime: number;
  source: "pyth" | "fixed";
}

/**
 * No price to quote. The message is what a caller is told (public, short); `detail` is for the
 * operator's log only, since it can hold what the RPC provider said.
 */
export class PriceUnavailable extends Error {
  constructor(message: string, readonly detail?: string) {
    super(message);
  }
}

/** A price whose confidence interval is wider than this share of it is not quoted. */
export const MAX_CONF_RATIO = 0.02;
/** Publication times this far ahead of our clock are refused (clock skew allowed for). */
const MAX_FUTURE_S = 10;

export interface PriceSource {
  /** A price read now (or the fixed one). */
  solUsd(): Promise<SolPrice>;
  /**
   * A price already in hand that is still good to quote, without waiting on anything; null when
   * there is none. A build uses it to put the fee into the transaction it simulates in its one
   * round trip (src/tokens/build-token.ts).
   */
  current?(): SolPrice | null;
}

export class FixedPriceSource implements PriceSource {
  constructor(private readonly usd: number, private readonly clock: Clock) {}
  solUsd(): Promise<SolPrice> {
    return Promise.resolve(this.current());
  }
  current(): SolPrice {
    return { usd: this.usd, publishTime: Math.floor(this.clock() / 1000), source: "fixed" };
  }
}

/**
 * Reads the Pyth SOL/USD price account through the same Solana RPC as everything else, and keeps
 * the last good reading for `keepMs` (Pyth publishes every slot, about 400 ms, so a reading a
 * second old is as good a quote as a new one). Nothing is read in the background: the first build
 * after a reading has expired reads the price again.
 */
export class PythPriceSource implements PriceSource {
  readonly #account: PublicKey;
  #last: { price: SolPrice; readAt: number } | null = null;

  constructor(
    private readonly connection: Connection,
    account: string,
    private readonly maxAgeS: number,
    private readonly clock: Clock,
    private readonly keepMs = 1_000,
  ) {
    this.#account = new PublicKey(account);
  }

  current(): SolPrice | null {
    const last = this.#last;
    if (!last) return null;
    const now = this.clock();
    const age = now - last.readAt;
    // The clock can be set back (tests do); a reading from "the future" is not trusted either.
    if (age < 0 || age > this.keepMs) return null;
    if (Math.floor(now / 1000) - last.price.publishTime > this.maxAgeS) return null;
    return last.price;
  }

  async solUsd(): Promise<SolPrice> {
    const readAt = this.clock();
    const price = await this.#read();
    this.#last = { price, readAt };
    return price;
  }

  async #read(): Promise<SolPrice> {
    let info;
    try {
      info = await this.connection.getAccountInfo(this.#account, "confirmed");
    } catch (e) {
      throw new PriceUnavailable("price account unreadable", (e as Error).message);
    }
    if (!info) throw new PriceUnavailable("price account not found");
    const p = decodePrice(info.data, info.owner.toBase58());
    const now = Math.floor(this.clock() / 1000);
    const age = now - p.publishTime;
    if (!(p.price > 0) || p.status !== "trading") throw new PriceUnavailable("price not trading");
    if (age > this.maxAgeS) throw new PriceUnavailable(`price is ${age} s old`);
    if (-age > MAX_FUTURE_S) throw new PriceUnavailable("price is published in the future");
    if (p.conf / p.price > MAX_CONF_RATIO) {
      throw new PriceUnavailable(
        `price too uncertain (confidence ±${(100 * p.conf / p.price).toFixed(2)}%)`,
      );
    }
    return { usd: p.price, publishTime: p.publishTime, source: "pyth" };
  }
}

/**
 * A Pyth SOL/USD price from either account kind: a pull-oracle price feed account (owned by the
 * receiver program, fully verified, of the SOL/USD feed) or a legacy push price account.
 */
function decodePrice(data: Uint8Array, owner: string): PythPrice {
  try {
    if (isPriceUpdateV2(data)) {
      if (owner !== PYTH_RECEIVER_PROGRAM_ID) throw new Error(`owner ${owner}`);
      const u = decodePriceUpdateV2(data);
      if (u.feedId !== PYTH_SOL_USD_FEED_ID) throw new Error(`feed ${u.feedId}, not SOL/USD`);
      if (u.verification.kind !== "full") throw new Error("price update only partly verified");
      return u;
    }
    if (owner !== PYTH_ORACLE_PROGRAM_ID) throw new Error(`owner ${owner}`);
    return decodePythPriceAccount(data);
  } catch (e) {
    throw new PriceUnavailable("price account malformed", (e as Error).message);
  }
}

/** ceil(usd / price * 1e9) in exact integer arithmetic (micro-dollars over nano-dollar prices). */
export function usdToLamports(usd: number, solUsd: number): bigint {
  const microUsd = BigInt(Math.round(usd * 1_000_000));
  const priceNano = BigInt(Math.round(solUsd * 1_000_000_000));
  const num = microUsd * 1_000_000_000n * 1_000n;
  return (num + priceNano - 1n) / priceNano;
}
