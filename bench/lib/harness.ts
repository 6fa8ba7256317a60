/**
 * The service for the benchmark: the real app (`bootstrap`, in-memory KV, the real portal flow
 * for keys) pointed through SOLANA_RPC_URL at the embedded chain running in its own process
 * (`startChainProcess`), as an RPC node is in a deployment. Talks to the app through the same
 * client as tests/support/harness.ts; chain control goes through the chain's /admin/ routes, so
 * funding a wallet is async.
 */
import { Keypair, LAMPORTS_PER_SOL } from "@solana/web3.js";
import { type Booted, bootstrap } from "../../src/bootstrap.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";
import { type AppClient, appClient, type NewApiKey } from "../../tests/support/app-client.ts";
import { type ChainProcess, startChainProcess } from "./chain-process.ts";

export interface BenchHarness extends Booted, Pick<AppClient, "request" | "waitForConfirmation"> {
  chainProcess: ChainProcess;
  kv: Deno.Kv;
  logs: string[];
  base: string;
  fundedWallet(sol?: number): Promise<Keypair>;
  newApiKey(wallet?: Keypair): Promise<NewApiKey>;
}

export async function startBenchHarness(opts: {
  env?: Record<string, string>;
  rpcFetch?: typeof fetch;
  slotMs?: number;
}): Promise<BenchHarness> {
  const chain = await startChainProcess({ slotMs: opts.slotMs ?? 40 });
  try {
    return await boot(chain, opts);
  } catch (e) {
    await chain.close();
    throw e;
  }
}

async function boot(
  chain: ChainProcess,
  opts: { env?: Record<string, string>; rpcFetch?: typeof fetch },
): Promise<BenchHarness> {
  const kv = await Deno.openKv(":memory:");
  const treasury = Keypair.generate();
  const config: Config = loadConfig({
    SOLANA_RPC_URL: chain.url,
    KEY_PEPPER: "bench-pepper-0123456789abcdef0123456789",
    TREASURY_ADDRESS: treasury.publicKey.toBase58(),
    PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
    LOG_LEVEL: "info",
    ...opts.env,
  });
  const logger = memoryLogger();
  const booted = await bootstrap(config, { kv, logger, rpcFetch: opts.rpcFetch });
  const base = config.publicBaseUrl;
  const client = appClient(booted, base, {
    confirmPolls: 500,
    advanceSlot: () => chain.slotMs === "manual" ? chain.advanceSlots(1) : undefined,
  });

  const h: BenchHarness = {
    ...booted,
    ...client,
    chainProcess: chain,
    kv,
    logs: logger.lines,
    base,
    async fundedWallet(sol = 10) {
      const w = Keypair.generate();
      await chain.airdrop(w.publicKey.toBase58(), BigInt(sol * LAMPORTS_PER_SOL));
      return w;
    },
    async newApiKey(wallet) {
      return await client.newApiKey(wallet ?? await h.fundedWallet());
    },
    async close() {
      await booted.close();
      kv.close();
      await chain.close();
    },
  };
  return h;
}
