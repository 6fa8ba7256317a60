/**
 * The embedded Solana chain: litesvm's runtime behind the Solana JSON-RPC API on loopback, so
 * an ordinary @solana/web3.js Connection can talk to it. See docs/chain.md.
 */
import { PublicKey } from "@solana/web3.js";
import { PYTH_SOL_USD_PRICE_FEED_ACCOUNT } from "../solana/pyth-receiver.ts";
import { ChainNode } from "./node.ts";
import type { TokenMetadataProgramInfo } from "./metadata-program-info.ts";
import { PubSub } from "./pubsub.ts";
import { Rpc } from "./rpc.ts";
import { type ChainFaults, ChainServer } from "./server.ts";
import { ChainRateLimiter, type ChainRpcLimitsMode } from "./rate-limits.ts";

export interface ChainOptions {
  /** Default "127.0.0.1". */
  hostname?: string;
  /** Default 8899 (env CHAIN_PORT is read by main.ts only); 0 picks a free port. */
  port?: number;
  /** PubSub (WebSocket) port; default port + 1, where web3.js looks for it. */
  wsPort?: number;
  /** Default 400 (env CHAIN_SLOT_MS); "manual" = slots advance only via advanceSlots(). */
  slotMs?: number | "manual";
  /** Wall clock (ms) block times follow; default Date.now. Tests inject the service's clock. */
  now?: () => number;
  /** Path to the real mpl token metadata .so; default env TOKEN_METADATA_PROGRAM_SO. */
  tokenMetadataProgramSo?: string;
  /** Initial price in the hosted Pyth SOL/USD account, default 150. */
  solUsdPrice?: number;
  /** Defaults from env CHAIN_LATENCY_MS / CHAIN_FAILURE_RATE. */
  faults?: Partial<ChainFaults>;
  /** Landed transactions kept for getTransaction & co (default env CHAIN_HISTORY_LIMIT or 50000). */
  historyLimit?: number;
  quiet?: boolean;
  /**
   * "public": answer 429 past the public endpoints' limits (100 requests per 10 s per client, 40
   * of one method), as they do. Default env CHAIN_RPC_LIMITS, else "none".
   */
  rpcLimits?: ChainRpcLimitsMode;
}

export interface EmbeddedChain {
  /** http://127.0.0.1:<port> */
  url: string;
  /** ws://127.0.0.1:<port + 1> */
  wsUrl: string;
  /**
   * Base58 address of the hosted Pyth SOL/USD price feed account (pull oracle). The legacy push
   * price account (`PYTH_SOL_USD_PRICE_ACCOUNT`) is hosted too, with the same price.
   */
  pythSolUsdAccount: string;
  /** Which Token Metadata program runs: emulated, or the loaded binary's path and sha256. */
  tokenMetadataProgram: TokenMetadataProgramInfo;
  advanceSlots(n: number): void;
  slot(): number;
  blockHeight(): number;
  /**
   * down=true closes the listeners (connection refused); false reopens on the same ports;
   * `downForMs` with `down: true` brings the node back up by itself after that long.
   */
  setFaults(f: Partial<ChainFaults> & { downForMs?: number }): void;
  faults(): ChainFaults;
  /** Changes the price and republishes now. */
  setSolPrice(usd: number): void;
  /** While paused the account's publish time and slot stop moving (the price goes stale). */
  pausePricePublishing(paused: boolean): void;
  /** A faucet transfer, recorded like any transaction. */
  airdrop(address: string, lamports: bigint): void;
  close(): Promise<void>;
}

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined; // no --allow-env: options only
  }
}

function envNumber(name: string): number | undefined {
  const v = env(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(v)}`);
  return n;
}

export function startChain(opts: ChainOptions = {}): Promise<EmbeddedChain> {
  try {
    return Promise.resolve(start(opts));
  } catch (e) {
    return Promise.reject(e);
  }
}

function start(opts: ChainOptions): EmbeddedChain {
  const hostname = opts.hostname ?? "127.0.0.1";
  const envSlot = env("CHAIN_SLOT_MS");
  const slotMs = opts.slotMs ??
    (envSlot === "manual" ? "manual" : envNumber("CHAIN_SLOT_MS")) ?? 400;
  if (slotMs !== "manual" && !(slotMs > 0)) throw new Error('slotMs must be > 0 or "manual"');

  const node = new ChainNode({
    tokenMetadataProgramSo: opts.tokenMetadataProgramSo ?? env("TOKEN_METADATA_PROGRAM_SO"),
    now: opts.now,
    solUsdPrice: opts.solUsdPrice ?? 150,
    historyLimit: opts.historyLimit ?? envNumber("CHAIN_HISTORY_LIMIT") ?? 50_000,
  });
  const rpc = new Rpc(node);
  const pubsub = new PubSub(node);
  let downTimer: ReturnType<typeof setTimeout> | undefined;

  const setFaults = (f: Partial<ChainFaults> & { downForMs?: number }) => {
    const { down, downForMs, ...rest } = f;
    Object.assign(server.faults, rest);
    if (down === undefined) return;
    server.faults.down = down;
    clearTimeout(downTimer);
    if (down && server.isUp) void server.down();
    if (!down && !server.isUp) server.up();
    if (down && downForMs) downTimer = setTimeout(() => setFaults({ down: false }), downForMs);
  };

  const airdrop = (address: string, lamports: bigint) =>
    node.airdrop(new PublicKey(address), lamports);

  const server: ChainServer = new ChainServer(hostname, (m, p) => rpc.call(m, p), pubsub, {
    state: (): unknown => ({
      slot: node.blocks.slot,
      blockHeight: node.blocks.blockHeight,
      faults: server.faults,
      rpcLimits: limits,
      price: node.priceState,
      pythSolUsdAccount: PYTH_SOL_USD_PRICE_FEED_ACCOUNT,
      slotMs,
    }),
    setFaults,
    advanceSlots: (n) => node.advanceSlots(n),
    setPrice: (p) => {
      if (p.usd !== undefined) node.setSolPrice(p.usd);
      if (p.paused !== undefined) node.pausePricePublishing(p.paused);
    },
    airdrop,
  });
  server.faults = {
    latencyMs: opts.faults?.latencyMs ?? envNumber("CHAIN_LATENCY_MS") ?? 0,
    failureRate: opts.faults?.failureRate ?? envNumber("CHAIN_FAILURE_RATE") ?? 0,
    down: false,
  };
  const limits = opts.rpcLimits ?? env("CHAIN_RPC_LIMITS") ?? "none";
  if (limits !== "none" && limits !== "public") {
    throw new Error(`CHAIN_RPC_LIMITS must be "none" or "public", got ${JSON.stringify(limits)}`);
  }
  if (limits === "public") server.rateLimits = new ChainRateLimiter();
  server.listen({ hostname, port: opts.port ?? 8899, wsPort: opts.wsPort });
  if (opts.faults?.down) setFaults({ down: true });

  // Slots follow wall time; a late timer catches up instead of drifting.
  let timer: ReturnType<typeof setInterval> | undefined;
  if (slotMs !== "manual") {
    const t0 = Date.now();
    let timerSlots = 0;
    timer = setInterval(() => {
      const due = Math.floor((Date.now() - t0) / slotMs) - timerSlots;
      if (due <= 0) return;
      const n = Math.min(due, 1_000);
      timerSlots += due;
      node.advanceSlots(n);
    }, slotMs);
  }

  const url = `http://${hostname}:${server.port}`;
  const chain: EmbeddedChain = {
    url,
    wsUrl: `ws://${hostname}:${server.wsPort}`,
    pythSolUsdAccount: PYTH_SOL_USD_PRICE_FEED_ACCOUNT,
    tokenMetadataProgram: node.tokenMetadataProgram,
    advanceSlots: (n) => node.advanceSlots(n),
    slot: () => node.blocks.slot,
    blockHeight: () => node.blocks.blockHeight,
    setFaults,
    faults: () => ({ ...server.faults }),
    setSolPrice: (usd) => node.setSolPrice(usd),
    pausePricePublishing: (paused) => node.pausePricePublishing(paused),
    airdrop: (address, lamports) => void airdrop(address, lamports),
    close: async () => {
      clearInterval(timer);
      clearTimeout(downTimer);
      await server.close();
    },
  };
  if (!opts.quiet) console.error(`embedded chain listening on ${url}`);
  return chain;
}
