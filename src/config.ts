/**
 * All configuration in one typed module, read from the environment and validated at start-up.
 * Every setting has a working local default; deploy mode (Deno Deploy) refuses to invent secrets
 * and never writes files.
 */
import { z } from "zod";
import { PublicKey } from "@solana/web3.js";

export const DEFAULT_WELL_KNOWN_NAMES = [
  "SOL",
  "Solana",
  "Wrapped SOL",
  "WSOL",
  "USDC",
  "USD Coin",
  "USDT",
  "Tether",
  "BONK",
  "JUP",
  "Jupiter",
  "RAY",
  "Raydium",
  "PYTH",
  "Pyth Network",
  "JTO",
  "Jito",
  "WIF",
  "dogwifhat",
  "ORCA",
  "mSOL",
  "Marinade",
  "jitoSOL",
  "bSOL",
  "BTC",
  "Bitcoin",
  "WBTC",
  "ETH",
  "Ethereum",
  "WETH",
  "TRUMP",
  "MELANIA",
  "PENGU",
  "Pudgy Penguins",
  "RENDER",
  "HNT",
  "Helium",
  "W",
  "Wormhole",
  "MEW",
  "POPCAT",
  "DAI",
  "PYUSD",
  "PayPal USD",
  "EURC",
  "Binance",
  "BNB",
  "Coinbase",
];

const address = z.string().refine((s) => {
  try {
    new PublicKey(s);
    return true;
  } catch {
    return false;
  }
}, "must be a base58 Solana address");

/** Only http(s): a file:, data: or javascript: URL here is a mistake, never a choice. */
const httpUrl = z.string().refine((s) => {
  try {
    return /^https?:$/.test(new URL(s).protocol);
  } catch {
    return false;
  }
}, "must be an http(s) URL");

const int = (d: number) => z.coerce.number().int().positive().default(d);

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOSTNAME: z.string().default("127.0.0.1"),
  DATA_DIR: z.string().default(".data"),
  PUBLIC_BASE_URL: httpUrl.optional(),
  SOLANA_RPC_URL: httpUrl.optional(),
  RPC_TIMEOUT_MS: int(10_000),
  RPC_RETRIES: z.coerce.number().int().min(0).max(5).default(2),
  CHAIN_PORT: z.coerce.number().int().min(0).max(65535).default(8899),
  NETWORK: z.enum(["localnet", "devnet", "mainnet-beta"]).default("localnet"),
  TREASURY_ADDRESS: address.optional(),
  KEY_PREFIX: z.string().regex(/^[a-z0-9]{1,16}$/, "lower-case letters and digits, 1-16").default(
    "tcb",
  ),
  KEY_PEPPER: z.string().min(32, "at least 32 characters").optional(),
  // Prices are used in nano-dollars and fees in micro-dollars (usdToLamports): below that they
  // round to nothing (a division by zero, or a fee transfer of 0 lamports).
  PRICE_SOL_USD: z.coerce.number().min(0.000000001, "at least 0.000000001").optional(),
  // The pull oracle's sponsored SOL/USD price feed account (same on mainnet and devnet); a legacy
  // push price account is still read if configured.
  PYTH_SOL_USD_ACCOUNT: address.default("7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE"),
  PRICE_MAX_AGE_S: int(120),
  STABLECOIN_MINT: address.optional(),
  STABLECOIN_DECIMALS: z.coerce.number().int().min(0).max(9).default(6),
  ACCESS_FEE_USD: z.coerce.number().min(0.000001, "at least 0.000001").default(10),
  TOKEN_FEE_USD: z.coerce.number().min(0.000001, "at least 0.000001").default(2.99),
  REQUESTS_PER_HOUR: int(600),
  PORTAL_REQUESTS_PER_HOUR: int(600),
  TOKENS_PER_DAY: int(25),
  METADATA_PER_DAY: int(100),
  HOSTED_ITEMS_PER_KEY: int(5000),
  MAX_PRIORITY_FEE_MICROLAMPORTS: int(1_000_000),
  SUSPEND_AFTER_UNVERIFIED: int(3),
  WELL_KNOWN_NAMES: z.string().optional(),
  ADMIN_TOKEN: z.string().min(32, "at least 32 characters").optional(),
  DEPLOY_MODE: z.enum(["0", "1"]).optional(),
  DENO_DEPLOYMENT_ID: z.string().optional(),
  // How long one vanity-address grind may take before 422 vanity_timeout (0: refuse at once).
  VANITY_BUDGET_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
  // Vanity grinds running at once in the process (one per API key in any case).
  VANITY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
});

export interface Limits {
  requestsPerHour: number;
  /** Portal calls that change state, per client address and UTC hour. */
  portalRequestsPerHour: number;
  tokensPerDay: number;
  metadataPerDay: number;
  imageBytes: number;
  hostedItemsPerKey: number;
}

export interface Config {
  port: number;
  hostname: string;
  dataDir: string;
  /** Deno Deploy: KV from Deno.openKv(), no file writes, secrets must come from the env. */
  deployMode: boolean;
  publicBaseUrl: string;
  /** null: start the embedded chain in-process. */
  solanaRpcUrl: string | null;
  chainPort: number;
  /** Budget for one RPC call, retries included, and how many retries a safe call may take. */
  rpc: { timeoutMs: number; retries: number };
  network: "localnet" | "devnet" | "mainnet-beta";
  /** Filled from the environment or, locally, from the generated file under DATA_DIR. */
  treasury: string | null;
  keyPrefix: string;
  keyPepper: string | null;
  price: { fixedSolUsd: number | null; pythAccount: string; maxAgeS: number };
  stablecoin: { mint: string | null; decimals: number };
  fees: { accessUsd: number; tokenUsd: number };
  limits: Limits;
  maxPriorityFeeMicroLamports: number;
  suspendAfterUnverified: number;
  wellKnownNames: string[];
  adminToken: string | null;
  /** Time budget of one vanity mint-address grind (ms); over it the build is 422. */
  vanityBudgetMs: number;
  /** Vanity grinds at once in the process; over it (or a second per key) 429. */
  vanityConcurrency: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Test-only: lets the image fetcher reach a plain-http loopback server. Never from the env. */
  allowLoopbackImageFetchForTests: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = EnvSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== "")),
  );
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => `${i.path.join(".") || "env"}: ${i.message}`),
    );
  }
  const e = parsed.data;
  const deployMode = e.DEPLOY_MODE === "1" ||
    (e.DEPLOY_MODE === undefined && !!e.DENO_DEPLOYMENT_ID);
  if (deployMode) {
    const missing = ["TREASURY_ADDRESS", "KEY_PEPPER", "SOLANA_RPC_URL", "PUBLIC_BASE_URL"]
      .filter((k) => !e[k as keyof typeof e]);
    if (missing.length) {
      throw new ConfigError(missing.map((k) => `${k}: required in deploy mode (no local files)`));
    }
  }
  // Hosted metadata URLs go on chain and wallets fetch them: off a local chain they must be https
  // (the build refuses any other metadataUri).
  // Unset means the local http default, so off localnet it must be set.
  if (
    (deployMode || e.NETWORK !== "localnet") &&
    (!e.PUBLIC_BASE_URL || new URL(e.PUBLIC_BASE_URL).protocol !== "https:")
  ) {
    throw new ConfigError([
      `PUBLIC_BASE_URL: must be set to an https URL ${
        deployMode ? "in deploy mode" : `on ${e.NETWORK}`
      }`,
    ]);
  }
  return {
    port: e.PORT,
    hostname: e.HOSTNAME,
    dataDir: e.DATA_DIR,
    deployMode,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://127.0.0.1:${e.PORT}`).replace(/\/+$/, ""),
    solanaRpcUrl: e.SOLANA_RPC_URL ?? null,
    chainPort: e.CHAIN_PORT,
    rpc: { timeoutMs: e.RPC_TIMEOUT_MS, retries: e.RPC_RETRIES },
    network: e.NETWORK,
    treasury: e.TREASURY_ADDRESS ?? null,
    keyPrefix: e.KEY_PREFIX,
    keyPepper: e.KEY_PEPPER ?? null,
    price: {
      fixedSolUsd: e.PRICE_SOL_USD ?? null,
      pythAccount: e.PYTH_SOL_USD_ACCOUNT,
      maxAgeS: e.PRICE_MAX_AGE_S,
    },
    stablecoin: { mint: e.STABLECOIN_MINT ?? null, decimals: e.STABLECOIN_DECIMALS },
    fees: { accessUsd: e.ACCESS_FEE_USD, tokenUsd: e.TOKEN_FEE_USD },
    limits: {
      requestsPerHour: e.REQUESTS_PER_HOUR,
      portalRequestsPerHour: e.PORTAL_REQUESTS_PER_HOUR,
      tokensPerDay: e.TOKENS_PER_DAY,
      metadataPerDay: e.METADATA_PER_DAY,
      imageBytes: 1_048_576,
      hostedItemsPerKey: e.HOSTED_ITEMS_PER_KEY,
    },
    maxPriorityFeeMicroLamports: e.MAX_PRIORITY_FEE_MICROLAMPORTS,
    suspendAfterUnverified: e.SUSPEND_AFTER_UNVERIFIED,
    wellKnownNames: e.WELL_KNOWN_NAMES
      ? e.WELL_KNOWN_NAMES.split(",").map((s) => s.trim()).filter(Boolean)
      : DEFAULT_WELL_KNOWN_NAMES,
    adminToken: e.ADMIN_TOKEN ?? null,
    vanityBudgetMs: e.VANITY_BUDGET_MS,
    vanityConcurrency: e.VANITY_CONCURRENCY,
    logLevel: e.LOG_LEVEL,
    allowLoopbackImageFetchForTests: false,
  };
}
