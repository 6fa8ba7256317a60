/**
 * A whole service for tests: the embedded chain on a free port, an in-memory KV, the real app,
 * and helpers that go through the real portal flow (sign-in, on-chain payment, key).
 */
import { Keypair, LAMPORTS_PER_SOL, VersionedTransaction } from "@solana/web3.js";
import { type Booted, bootstrap } from "../../src/bootstrap.ts";
import { type ChainOptions, type EmbeddedChain, startChain } from "../../src/chain/mod.ts";
import type { Clock } from "../../src/kernel/clock.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";
import type { PriceSource } from "../../src/pricing/price-source.ts";
import { FixedPriceSource } from "../../src/pricing/price-source.ts";
import { type AppClient, appClient, type NewApiKey } from "./app-client.ts";

export interface HarnessOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  clock?: Clock;
  price?: PriceSource | "pyth";
  chain?: ChainOptions;
  rpcFetch?: typeof fetch;
  watch?: boolean;
}

export interface Harness extends Booted, Omit<AppClient, "newApiKey"> {
  chain: EmbeddedChain;
  kv: Deno.Kv;
  logs: string[];
  treasury: Keypair;
  base: string;
  fundedWallet(sol?: number): Keypair;
  /** The real purchase flow; a freshly funded wallet unless one is given. */
  newApiKey(wallet?: Keypair): Promise<NewApiKey>;
}

export const TEST_PEPPER = "test-pepper-0123456789abcdef0123456789";

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const chain = await startChain({ port: 0, slotMs: 40, quiet: true, ...opts.chain });
  const kv = await Deno.openKv(":memory:");
  const treasury = Keypair.generate();
  const config: Config = {
    ...loadConfig({
      SOLANA_RPC_URL: chain.url,
      KEY_PEPPER: TEST_PEPPER,
      TREASURY_ADDRESS: treasury.publicKey.toBase58(),
      PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
      LOG_LEVEL: "debug",
      ...opts.env,
    }),
    ...opts.config,
  };
  const logger = memoryLogger();
  const clock = opts.clock ?? Date.now;
  const booted = await bootstrap(config, {
    kv,
    clock,
    logger,
    price: opts.price === "pyth" ? undefined : opts.price ?? new FixedPriceSource(150, clock),
    rpcFetch: opts.rpcFetch,
    watch: opts.watch,
  });
  const base = config.publicBaseUrl;
  const client = appClient(booted, base, {
    advanceSlot: () => {
      if (opts.chain?.slotMs === "manual") chain.advanceSlots(1);
    },
  });

  const h: Harness = {
    ...booted,
    ...client,
    chain,
    kv,
    logs: logger.lines,
    treasury,
    base,
    fundedWallet(sol = 10) {
      const w = Keypair.generate();
      chain.airdrop(w.publicKey.toBase58(), BigInt(sol * LAMPORTS_PER_SOL));
      return w;
    },
    newApiKey: (wallet = h.fundedWallet()) => client.newApiKey(wallet),
    async close() {
      await booted.close();
      kv.close();
      await chain.close();
    },
  };
  return h;
}

export { signWithKeypair as signMessage } from "../../src/portal/sign-with-keypair.ts";

export const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

/** Decodes a base64 transaction the service returned. */
export const decodeTx = (b64: string) =>
  VersionedTransaction.deserialize(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
