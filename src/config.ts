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

/** Requests per 10 s: a positive whole number or "unlimited"; unset: decided by the RPC URL. */
const perTenSeconds = z.union([
  z.literal("unlimited"),
  z.coerce.number().int().positive('a positive whole number or "unlimited"'),
]).optional();

/** The cluster's own endpoints, which enforce the public limits (100 and 40 per 10 s per IP). */
export const PUBLIC_RPC_HOSTS = [
  "api.mainnet-beta.solana.com",
  "api.devnet.solana.com",
  "api.testnet.solana.com",
];

function isPublicEndpoint(url: string | undefined): boolean {
  return !!url && PUBLIC_RPC_HOSTS.includes(new URL(url).hostname.toLowerCase());
}

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOSTNAME: z.string().default("127.0.0.1"),
  DATA_DIR: z.string().default(".data"),
  PUBLIC_BASE_URL: httpUrl.optional(),
  HOSTED_BASE_URL: httpUrl.optional(),
  SOLANA_RPC_URL: httpUrl.optional(),
  RPC_TIMEOUT_MS: int(10_000),
  RPC_RETRIES: z.coerce.number().int().min(0).max(5).default(2),
  RPC_BUDGET_PER_10S: perTenSeconds,
  RPC_BUDGET_PER_METHOD_PER_10S: perTenSeconds,
  RPC_BUDGET_USER_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  RPC_BUDGET_BACKGROUND_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  RPC_BUDGET_BACKGROUND_RESERVE: z.coerce.number().min(0).max(1).default(0.1),
  CHAIN_RPC_LIMITS: z.enum(["none", "public"]).default("none"),
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
  // A mint address, or `local`: a 6-decimal test mint the service creates on a local chain. Its
  // decimals and token program are read from the chain at start; STABLECOIN_DECIMALS, if set, must
  // agree with the mint.
  STABLECOIN_MINT: z.union([z.literal("local"), address]).optional(),
  STABLECOIN_DECIMALS: z.coerce.number().int().min(0).max(9).optional(),
  // How long an access quote is payable at its amount; a payment landed later is priced anew.
  QUOTE_TTL_S: int(600),
  ACCESS_FEE_USD: z.coerce.number().min(0.000001, "at least 0.000001").default(10),
  TOKEN_FEE_USD: z.coerce.number().min(0.000001, "at least 0.000001").default(2.99),
  // An update of a token's metadata or authorities (src/pricing/update-fee.ts); 0: free.
  UPDATE_FEE_USD: z.coerce.number().min(0, "at least 0").default(0),
  REQUESTS_PER_HOUR: int(600),
  PORTAL_REQUESTS_PER_HOUR: int(600),
  TOKENS_PER_DAY: int(25),
  // The Solana Action (src/actions/): no API key, so limits of its own, per payer wallet per UTC
  // day and per client address per UTC hour.
  ACTIONS_BUILDS_PER_WALLET_PER_DAY: int(5),
  ACTIONS_REQUESTS_PER_IP_PER_HOUR: int(30),
  METADATA_PER_DAY: int(100),
  HOSTED_ITEMS_PER_KEY: int(5000),
  // Largest hosted image in bytes. At most 1 MiB: a base64 upload of it must fit POST
  // /v1/metadata's 2 MiB body limit, and the seed caps images at 1 MB.
  IMAGE_MAX_BYTES: z.coerce.number().int().min(1024).max(1_048_576).default(1_048_576),
  IMAGE_MAX_WIDTH: int(4096),
  IMAGE_MAX_HEIGHT: int(4096),
  MAX_PRIORITY_FEE_MICROLAMPORTS: int(1_000_000),
  // Conduct (src/conduct/policy.ts): unverified landings a payer wallet may have before its
  // builds are refused; those paid by the key's own wallet that are tolerated (one more
  // suspends); and the share of the purchase's last 100 landings that, unverified and from at
  // least SUSPEND_MIN_UNVERIFIED_PAYERS wallets, suspends the key.
  REFUSE_PAYER_AFTER_UNVERIFIED: int(1),
  SUSPEND_AFTER_UNVERIFIED: int(3),
  SUSPEND_UNVERIFIED_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  SUSPEND_MIN_UNVERIFIED_PAYERS: int(10),
  WELL_KNOWN_NAMES: z.string().optional(),
  ADMIN_TOKEN: z.string().min(32, "at least 32 characters").optional(),
  DEPLOY_MODE: z.enum(["0", "1"]).optional(),
  DENO_DEPLOYMENT_ID: z.string().optional(),
  // How long one vanity-address grind may take before 422 vanity_timeout (0: refuse at once).
  VANITY_BUDGET_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
  // Vanity grinds running at once in the process (one per API key in any case).
  VANITY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  WEBHOOK_ALLOW_LOOPBACK: z.enum(["true", "false"]).default("false"),
});

/** Every environment variable the configuration reads (the policies' own included). */
export const ENV_NAMES = Object.keys(EnvSchema.shape);

/** What unverified landings lead to (src/conduct/policy.ts decides with it). */
export interface ConductPolicy {
  refusePayerAfter: number;
  keyWalletTolerated: number;
  share: number;
  minPayers: number;
}

export interface Limits {
  requestsPerHour: number;
  /** Portal calls that change state, per client address and UTC hour. */
  portalRequestsPerHour: number;
  tokensPerDay: number;
  /** Solana Action builds (POSTs that reach the build) per payer wallet per UTC day. */
  actionsBuildsPerWalletPerDay: number;
  /** Solana Action POSTs per client address per UTC hour. */
  actionsRequestsPerIpPerHour: number;
  metadataPerDay: number;
  imageBytes: number;
  /** The pixel bound of a hosted image: every wallet that shows it must decode it. */
  imageMaxWidth: number;
  imageMaxHeight: number;
  hostedItemsPerKey: number;
}

export interface Config {
  port: number;
  hostname: string;
  dataDir: string;
  /** Deno Deploy: KV from Deno.openKv(), no file writes, secrets must come from the env. */
  deployMode: boolean;
  publicBaseUrl: string;
  /**
   * Where hosted files (/m/, /i/) are served and linked from: an origin apart from the portal's,
   * so nothing hosted can ever act with the portal's cookies or storage (docs/deploy.md). Null:
   * `publicBaseUrl`.
   */
  hostedBaseUrl: string | null;
  /** null: start the embedded chain in-process. */
  solanaRpcUrl: string | null;
  chainPort: number;
  /** Budget for one RPC call, retries included, and how many retries a safe call may take. */
  rpc: { timeoutMs: number; retries: number };
  /**
   * What the RPC lets us send per 10 s, in all and of any one method (null = unlimited); how long
   * a user request may wait for room before it answers 503; the share background work may hold.
   */
  rpcBudget: {
    total: number | null;
    perMethod: number | null;
    userWaitMs: number;
    backgroundShare: number;
  };
  /**
   * Share of each RPC budget limit held for background work once user requests have kept it
   * waiting a whole window (at most `rpcBudget.backgroundShare`).
   */
  rpcBackgroundReserve: number;
  /** The embedded chain answers 429 past the public endpoints' limits ("public") or never. */
  chainRpcLimits: "none" | "public";
  network: "localnet" | "devnet" | "mainnet-beta";
  /** Filled from the environment or, locally, from the generated file under DATA_DIR. */
  treasury: string | null;
  keyPrefix: string;
  keyPepper: string | null;
  price: { fixedSolUsd: number | null; pythAccount: string; maxAgeS: number };
  /**
   * As configured: a mint address or "local", and the decimals the operator expects (null: the
   * mint's). What the service uses is read from the chain at start (Services.stablecoin).
   */
  stablecoin: { mint: string | null; decimals: number | null };
  fees: { accessUsd: number; tokenUsd: number; updateUsd: number };
  /** Seconds an access quote (or top-up) is payable at its amount. */
  quoteTtlS: number;
  limits: Limits;
  maxPriorityFeeMicroLamports: number;
  conduct: ConductPolicy;
  wellKnownNames: string[];
  adminToken: string | null;
  /** Time budget of one vanity mint-address grind (ms); over it the build is 422. */
  vanityBudgetMs: number;
  /** Vanity grinds at once in the process; over it (or a second per key) 429. */
  vanityConcurrency: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Test-only: lets the image fetcher reach a plain-http loopback server. Never from the env. */
  allowLoopbackImageFetchForTests: boolean;
  /**
   * allowLoopback: webhook endpoints on 127.0.0.1 / ::1 (plain http) may register and receive,
   * for local development and tests; refused in deploy mode.
   */
  webhooks: { allowLoopback: boolean };
  /**
   * Test-only: false stands for a process too stalled to renew its Idempotency-Key leases (see
   * src/http/idempotency.ts). Never from the env; unset means renew.
   */
  idempotencyLeaseRenewalForTests?: boolean;
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
  if (deployMode && e.WEBHOOK_ALLOW_LOOPBACK === "true") {
    throw new ConfigError([
      "WEBHOOK_ALLOW_LOOPBACK: must not be true in deploy mode (webhooks to loopback are for " +
      "local development and tests)",
    ]);
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
  const publicBaseUrl = (e.PUBLIC_BASE_URL ?? `http://127.0.0.1:${e.PORT}`).replace(/\/+$/, "");
  const hostedBaseUrl = e.HOSTED_BASE_URL?.replace(/\/+$/, "") ?? null;
  if (hostedBaseUrl !== null) {
    const problems: string[] = [];
    if ((deployMode || e.NETWORK !== "localnet") && new URL(hostedBaseUrl).protocol !== "https:") {
      problems.push("HOSTED_BASE_URL: must be an https URL off a local chain");
    }
    if (new URL(hostedBaseUrl).origin === new URL(publicBaseUrl).origin) {
      problems.push("HOSTED_BASE_URL: must be another origin than PUBLIC_BASE_URL's (or unset)");
    }
    if (new URL(hostedBaseUrl).pathname !== "/") {
      problems.push("HOSTED_BASE_URL: must be an origin only (no path)");
    }
    if (problems.length) throw new ConfigError(problems);
  }
  if (e.STABLECOIN_MINT === "local" && (deployMode || e.NETWORK !== "localnet")) {
    throw new ConfigError([
      "STABLECOIN_MINT: `local` (a test mint) exists on a local chain only; set the mint's address",
    ]);
  }
  return {
    port: e.PORT,
    hostname: e.HOSTNAME,
    dataDir: e.DATA_DIR,
    deployMode,
    publicBaseUrl,
    hostedBaseUrl,
    solanaRpcUrl: e.SOLANA_RPC_URL ?? null,
    chainPort: e.CHAIN_PORT,
    rpc: { timeoutMs: e.RPC_TIMEOUT_MS, retries: e.RPC_RETRIES },
    rpcBudget: rpcBudget(e),
    rpcBackgroundReserve: e.RPC_BUDGET_BACKGROUND_RESERVE,
    chainRpcLimits: e.CHAIN_RPC_LIMITS,
    network: e.NETWORK,
    treasury: e.TREASURY_ADDRESS ?? null,
    keyPrefix: e.KEY_PREFIX,
    keyPepper: e.KEY_PEPPER ?? null,
    price: {
      fixedSolUsd: e.PRICE_SOL_USD ?? null,
      pythAccount: e.PYTH_SOL_USD_ACCOUNT,
      maxAgeS: e.PRICE_MAX_AGE_S,
    },
    stablecoin: { mint: e.STABLECOIN_MINT ?? null, decimals: e.STABLECOIN_DECIMALS ?? null },
    fees: { accessUsd: e.ACCESS_FEE_USD, tokenUsd: e.TOKEN_FEE_USD, updateUsd: e.UPDATE_FEE_USD },
    quoteTtlS: e.QUOTE_TTL_S,
    limits: {
      requestsPerHour: e.REQUESTS_PER_HOUR,
      portalRequestsPerHour: e.PORTAL_REQUESTS_PER_HOUR,
      tokensPerDay: e.TOKENS_PER_DAY,
      actionsBuildsPerWalletPerDay: e.ACTIONS_BUILDS_PER_WALLET_PER_DAY,
      actionsRequestsPerIpPerHour: e.ACTIONS_REQUESTS_PER_IP_PER_HOUR,
      metadataPerDay: e.METADATA_PER_DAY,
      imageBytes: e.IMAGE_MAX_BYTES,
      imageMaxWidth: e.IMAGE_MAX_WIDTH,
      imageMaxHeight: e.IMAGE_MAX_HEIGHT,
      hostedItemsPerKey: e.HOSTED_ITEMS_PER_KEY,
    },
    maxPriorityFeeMicroLamports: e.MAX_PRIORITY_FEE_MICROLAMPORTS,
    conduct: {
      refusePayerAfter: e.REFUSE_PAYER_AFTER_UNVERIFIED,
      keyWalletTolerated: e.SUSPEND_AFTER_UNVERIFIED,
      share: e.SUSPEND_UNVERIFIED_SHARE,
      minPayers: e.SUSPEND_MIN_UNVERIFIED_PAYERS,
    },
    wellKnownNames: e.WELL_KNOWN_NAMES
      ? e.WELL_KNOWN_NAMES.split(",").map((s) => s.trim()).filter(Boolean)
      : DEFAULT_WELL_KNOWN_NAMES,
    adminToken: e.ADMIN_TOKEN ?? null,
    vanityBudgetMs: e.VANITY_BUDGET_MS,
    vanityConcurrency: e.VANITY_CONCURRENCY,
    logLevel: e.LOG_LEVEL,
    allowLoopbackImageFetchForTests: false,
    webhooks: { allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK === "true" },
  };
}

/**
 * Unset limits follow the RPC: the public limits on a cluster's public endpoint (or on the
 * embedded chain when it enforces them), unlimited on any other (a paid RPC bills per call but
 * does not refuse at these rates; set the plan's limits explicitly).
 */
function rpcBudget(e: z.infer<typeof EnvSchema>): Config["rpcBudget"] {
  const isPublic = e.SOLANA_RPC_URL
    ? isPublicEndpoint(e.SOLANA_RPC_URL)
    : e.CHAIN_RPC_LIMITS === "public";
  const pick = (v: number | "unlimited" | undefined, publicLimit: number) =>
    v === "unlimited" ? null : v ?? (isPublic ? publicLimit : null);
  return {
    total: pick(e.RPC_BUDGET_PER_10S, 100),
    perMethod: pick(e.RPC_BUDGET_PER_METHOD_PER_10S, 40),
    userWaitMs: e.RPC_BUDGET_USER_WAIT_MS,
    backgroundShare: e.RPC_BUDGET_BACKGROUND_SHARE,
  };
}
