/**
 * Wires the edges together: configuration, KV, the Solana RPC (or the embedded chain), the price
 * source, the event store and the app. `main.ts` serves it; tests and benchmarks call it with
 * their own KV, clock and chain.
 */
import { Connection, PublicKey } from "@solana/web3.js";
import { EventStore } from "../events/store.ts";
import { allProjections } from "../projections/index.ts";
import { createApp } from "./app.ts";
// Type only: the embedded chain loads litesvm's native addon, which Deno Deploy cannot run, so it
// is imported on demand when no SOLANA_RPC_URL is configured.
import type { EmbeddedChain } from "./chain/mod.ts";
import { type Clock, systemClock } from "./kernel/clock.ts";
import { type Config, ConfigError } from "./config.ts";
import { jsonLogger, type Logger } from "./kernel/logger.ts";
import { importPepper } from "./keys/api-key.ts";
import { localSecrets } from "./local/data-dir.ts";
import { FixedPriceSource, type PriceSource, PythPriceSource } from "./pricing/price-source.ts";
import { routeGroups } from "./routes/index.ts";
import { QueueDispatcher } from "./queue.ts";
import { startWatcher } from "./creation/watcher.ts";
import type { Services } from "./services.ts";
import { boundedRpcFetch } from "./solana/rpc-fetch.ts";
import { RpcBudget, type RpcPriority } from "./solana/rpc-budget.ts";
import { ThrottleLog } from "./solana/rpc-throttle-log.ts";
import { deliverWebhook } from "./webhooks/deliver.ts";
import { traceKvCommit } from "./telemetry/tracing.ts";
import { isDeliveryMessage, WEBHOOK_QUEUE_KIND } from "./webhooks/scheduler.ts";
import { readStablecoin, type Stablecoin, StablecoinRefused } from "./solana/stablecoin.ts";

export interface BootOptions {
  kv?: Deno.Kv;
  clock?: Clock;
  logger?: Logger;
  price?: PriceSource;
  /** Wraps the RPC client's fetch: tests count round trips, benchmarks inject latency. */
  rpcFetch?: typeof fetch;
  /** Start the background watcher and re-broadcaster on the KV queue (the service does). */
  watch?: boolean;
}

export interface Booted {
  services: Services;
  app: ReturnType<typeof createApp>;
  chain: EmbeddedChain | null;
  close(): Promise<void>;
}

export async function bootstrap(config: Config, opts: BootOptions = {}): Promise<Booted> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? jsonLogger(config.logLevel);

  let treasury = config.treasury;
  let pepper = config.keyPepper;
  if (!config.deployMode && (!treasury || !pepper)) {
    const local = await localSecrets(config.dataDir);
    treasury ??= local.treasury.publicKey.toBase58();
    pepper ??= local.pepper;
  }
  if (!treasury || !pepper) throw new Error("TREASURY_ADDRESS and KEY_PEPPER are required");

  let chain: EmbeddedChain | null = null;
  let rpcUrl = config.solanaRpcUrl;
  if (!rpcUrl) {
    const { startChain } = await import("./chain/mod.ts");
    chain = await startChain({
      port: config.chainPort,
      quiet: true,
      rpcLimits: config.chainRpcLimits,
    });
    rpcUrl = chain.url;
    logger.log("info", "embedded chain started", {
      url: chain.url,
      tokenMetadataProgram: chain.tokenMetadataProgram,
    });
  }

  const ownsKv = !opts.kv;
  const kv = opts.kv ?? (config.deployMode ? await Deno.openKv() : await (async () => {
    await Deno.mkdir(config.dataDir, { recursive: true });
    return Deno.openKv(`${config.dataDir}/kv.sqlite3`);
  })());

  // One budget for both priorities: the RPC counts our requests together. Its windows follow real
  // time (the RPC's), never the service's clock, which tests may stop.
  const { total, perMethod, userWaitMs, backgroundShare } = config.rpcBudget;
  const rpcBudget = new RpcBudget({ total, perMethod, windowMs: 10_000 }, {
    userWaitMs,
    backgroundShare,
    backgroundReserve: config.rpcBackgroundReserve,
  });
  const throttleLog = new ThrottleLog(logger);
  const connectionAt = (priority: RpcPriority) =>
    new Connection(rpcUrl, {
      commitment: "confirmed",
      disableRetryOnRateLimit: true,
      fetch: boundedRpcFetch({
        ...config.rpc,
        base: opts.rpcFetch,
        budget: rpcBudget,
        priority,
        throttleLog,
      }),
    });
  const connection = connectionAt("user");
  let stablecoin: Stablecoin | undefined;
  try {
    stablecoin = await configuredStablecoin(connection, config);
  } catch (e) {
    if (ownsKv) kv.close();
    await chain?.close();
    throw e;
  }
  const price = opts.price ??
    (config.price.fixedSolUsd
      ? new FixedPriceSource(config.price.fixedSolUsd, clock)
      : new PythPriceSource(connection, config.price.pythAccount, config.price.maxAgeS, clock));

  const services: Services = {
    config: { ...config, treasury, keyPepper: pepper, solanaRpcUrl: rpcUrl },
    kv,
    store: new EventStore(kv, {
      projections: allProjections,
      now: clock,
      aroundCommit: traceKvCommit,
    }),
    clock,
    connection,
    backgroundConnection: connectionAt("background"),
    rpcBudget,
    price,
    logger,
    pepper: await importPepper(pepper),
    treasury: new PublicKey(treasury),
    stablecoin,
  };
  const app = createApp(services, routeGroups);
  let queue: QueueDispatcher | null = null;
  if (opts.watch) {
    queue = new QueueDispatcher(
      kv,
      (e, kind) => logger.log("error", "queue job failed", { kind, error: String(e) }),
      (kind) => logger.log("info", "stopping: queue message left for the next start", { kind }),
    );
    queue.on(WEBHOOK_QUEUE_KIND, async (m) => {
      if (isDeliveryMessage(m)) await deliverWebhook(services, m);
    });
    // On Deploy, src/main.ts also sweeps from a top-level Deno.cron (it must be registered there).
    // Background work goes through the background connection (it yields to user requests).
    await startWatcher({ ...services, connection: services.backgroundConnection }, queue);
  }
  let closing: Promise<void> | null = null;
  return {
    services,
    app,
    chain,
    close() {
      // Idempotent: a second call waits for the first instead of closing a closed KV.
      closing ??= (async () => {
        // Queue jobs in flight finish first: closing the KV under them would fail them.
        await queue?.stop();
        if (ownsKv) kv.close();
        await chain?.close();
      })();
      return closing;
    },
  };
}

/**
 * The stablecoin's facts from the chain (one getAccountInfo); `local` first creates the test mint
 * on the local chain. A mint that is missing, not a token mint, or whose decimals disagree with
 * STABLECOIN_DECIMALS stops the start with a ConfigError naming it.
 */
async function configuredStablecoin(
  connection: Connection,
  config: Config,
): Promise<Stablecoin | undefined> {
  const { mint, decimals } = config.stablecoin;
  if (!mint) return undefined;
  const address = mint === "local"
    ? await (await import("./chain/local-stablecoin.ts")).ensureLocalStablecoin(connection)
    : new PublicKey(mint);
  try {
    return await readStablecoin(connection, address, decimals);
  } catch (e) {
    if (e instanceof StablecoinRefused) throw new ConfigError([e.message]);
    throw e;
  }
}
