/** The edges the domain talks to, built once at start-up and handed to the app. */
import type { Connection, PublicKey } from "@solana/web3.js";
import type { EventStore } from "../events/store.ts";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./http/logger.ts";
import type { PriceSource } from "./pricing/price-source.ts";
import type { Stablecoin } from "./solana/stablecoin.ts";

export interface Services {
  config: Config;
  kv: Deno.Kv;
  store: EventStore;
  clock: Clock;
  connection: Connection;
  price: PriceSource;
  logger: Logger;
  pepper: CryptoKey;
  treasury: PublicKey;
  /** The stablecoin the access fee can be paid in, as read from the chain at start. */
  stablecoin?: Stablecoin;
}
