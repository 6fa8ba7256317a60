/** Where the SOL/USD price comes from. A missing or stale price is an error the API maps to 503. */
import { Connection, PublicKey } from "@solana/web3.js";
import type { Clock } from "../clock.ts";
import { decodePythPriceAccount } from "../solana/pyth.ts";

export interface SolPrice {
  usd: number;
  /** Unix seconds of the publication. */
  publishTime: number;
  source: "pyth" | "fixed";
}

export class PriceUnavailable extends Error {}

export interface PriceSource {
  solUsd(): Promise<SolPrice>;
}

export class FixedPriceSource implements PriceSource {
  constructor(private readonly usd: number, private readonly clock: Clock) {}
  solUsd(): Promise<SolPrice> {
    return Promise.resolve({
      usd: this.usd,
      publishTime: Math.floor(this.clock() / 1000),
      source: "fixed",
    });
  }
}

/** Reads the Pyth SOL/USD price account through the same Solana RPC as everything else. */
export class PythPriceSource implements PriceSource {
  readonly #account: PublicKey;
  constructor(
    private readonly connection: Connection,
    account: string,
    private readonly maxAgeS: number,
    private readonly clock: Clock,
  ) {
    this.#account = new PublicKey(account);
  }

  async solUsd(): Promise<SolPrice> {
    let info;
    try {
      info = await this.connection.getAccountInfo(this.#account, "confirmed");
    } catch (e) {
      throw new PriceUnavailable(`price account unreadable: ${(e as Error).message}`);
    }
    if (!info) throw new PriceUnavailable("price account not found");
    let p;
    try {
      p = decodePythPriceAccount(info.data);
    } catch (e) {
      throw new PriceUnavailable(`price account malformed: ${(e as Error).message}`);
    }
    const age = Math.floor(this.clock() / 1000) - p.publishTime;
    if (!(p.price > 0) || p.status !== "trading") throw new PriceUnavailable("price not trading");
    if (age > this.maxAgeS) throw new PriceUnavailable(`price is ${age} s old`);
    return { usd: p.price, publishTime: p.publishTime, source: "pyth" };
  }
}

/** ceil(usd / price * 1e9) in exact integer arithmetic (micro-dollars over nano-dollar prices). */
export function usdToLamports(usd: number, solUsd: number): bigint {
  const microUsd = BigInt(Math.round(usd * 1_000_000));
  const priceNano = BigInt(Math.round(solUsd * 1_000_000_000));
  const num = microUsd * 1_000_000_000n * 1_000n;
  return (num + priceNano - 1n) / priceNano;
}
