/** The edges the domain talks to, built once at start-up and handed to the app. */
import type { Connection, PublicKey } from "@solana/web3.js";
import type { Enqueue, EventStore } from "../events/store.ts";
import type { Clock } from "./kernel/clock.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./kernel/logger.ts";
import type { PriceSource } from "./pricing/price-source.ts";
import type { RpcBudget } from "./solana/rpc-budget.ts";
import type { Stablecoin } from "./solana/stablecoin.ts";

export interface Services {
  config: Config;
  kv: Deno.Kv;
  store: EventStore;
  clock: Clock;
  /** For work a caller waits on: may use the whole RPC budget, refused (503) when it can't. */
  connection: Connection;
  /**
   * The same RPC and budget at background priority (watcher, rebroadcast): waits for room, holds
   * at most its share of the budget, and never goes before a waiting user request.
   */
  backgroundConnection: Connection;
  rpcBudget: RpcBudget;
  price: PriceSource;
  logger: Logger;
  pepper: CryptoKey;
  treasury: PublicKey;
  /** How webhook attempts are queued; the Deno KV queue unless a test drives them itself. */
  webhookScheduler?: DeliveryScheduler;
  /** The stablecoin the access fee can be paid in, as read from the chain at start. */
  stablecoin?: Stablecoin;
}

/** A queued webhook delivery attempt; src/webhooks/scheduler.ts makes and recognises them. */
export interface DeliveryMessage {
  kind: "webhook.deliver";
  deliveryId: string;
  /** The attempt this message makes (1-based); a message for an attempt already made is dropped. */
  attempt: number;
}

/**
 * How a delivery attempt is put on the queue. A port named here, not in webhooks/, so that the
 * services the features take stay below them; the Deno KV adapter is in webhooks/scheduler.ts.
 */
export interface DeliveryScheduler {
  /** The enqueue entries that run `msg` after `delayMs`. */
  schedule(msg: DeliveryMessage, delayMs: number): Enqueue[];
}
