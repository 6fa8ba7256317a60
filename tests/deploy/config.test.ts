import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { ConfigError, DEFAULT_WELL_KNOWN_NAMES, ENV_NAMES, loadConfig } from "../../src/config.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    assert(e instanceof ConfigError, `expected ConfigError, got ${e}`);
    assertEquals(e.message, `invalid configuration:\n  ${e.problems.join("\n  ")}`);
    return e.problems;
  }
  throw new Error("expected a ConfigError");
}

Deno.test("bad values: one ConfigError lists every bad variable by name with its reason", () => {
  const bad: Record<string, RegExp> = {
    PORT: /^PORT: .*65535/,
    PUBLIC_BASE_URL: /^PUBLIC_BASE_URL: must be an http\(s\) URL/,
    SOLANA_RPC_URL: /^SOLANA_RPC_URL: must be an http\(s\) URL/,
    RPC_RETRIES: /^RPC_RETRIES: .*<=5/,
    NETWORK: /^NETWORK: .*"localnet"\|"devnet"\|"mainnet-beta"/,
    TREASURY_ADDRESS: /^TREASURY_ADDRESS: must be a base58 Solana address/,
    KEY_PREFIX: /^KEY_PREFIX: lower-case letters and digits, 1-16/,
    KEY_PEPPER: /^KEY_PEPPER: at least 32 characters/,
    PRICE_SOL_USD: /^PRICE_SOL_USD: at least 0.000000001/,
    TOKEN_FEE_USD: /^TOKEN_FEE_USD: at least 0.000001/,
    TOKENS_PER_DAY: /^TOKENS_PER_DAY: .*>0/,
    REQUESTS_PER_HOUR: /^REQUESTS_PER_HOUR: .*expected number/,
    STABLECOIN_DECIMALS: /^STABLECOIN_DECIMALS: .*<=9/,
    SUSPEND_AFTER_UNVERIFIED: /^SUSPEND_AFTER_UNVERIFIED: .*int/,
    REFUSE_PAYER_AFTER_UNVERIFIED: /^REFUSE_PAYER_AFTER_UNVERIFIED: .*>0/,
    SUSPEND_UNVERIFIED_SHARE: /^SUSPEND_UNVERIFIED_SHARE: .*<=1/,
    SUSPEND_MIN_UNVERIFIED_PAYERS: /^SUSPEND_MIN_UNVERIFIED_PAYERS: .*expected number/,
    ADMIN_TOKEN: /^ADMIN_TOKEN: at least 32 characters/,
    DEPLOY_MODE: /^DEPLOY_MODE: .*"0"\|"1"/,
    LOG_LEVEL: /^LOG_LEVEL: .*"debug"/,
  };
  const got = problems({
    PORT: "70000",
    PUBLIC_BASE_URL: "not a url",
    // A URL, but not one we can call: file:, data: and javascript: are refused like garbage.
    SOLANA_RPC_URL: "file:///etc/passwd",
    RPC_RETRIES: "9",
    NETWORK: "moonnet",
    TREASURY_ADDRESS: "0xabc",
    KEY_PREFIX: "TCB!",
    KEY_PEPPER: "short",
    // Positive, but rounded to nothing where it is used (nano-dollars; micro-dollars for fees).
    PRICE_SOL_USD: "1e-10",
    TOKEN_FEE_USD: "0.0000001",
    TOKENS_PER_DAY: "-1",
    REQUESTS_PER_HOUR: "lots",
    STABLECOIN_DECIMALS: "12",
    SUSPEND_AFTER_UNVERIFIED: "2.5",
    REFUSE_PAYER_AFTER_UNVERIFIED: "0",
    SUSPEND_UNVERIFIED_SHARE: "1.5",
    SUSPEND_MIN_UNVERIFIED_PAYERS: "many",
    ADMIN_TOKEN: "hunter2",
    DEPLOY_MODE: "yes",
    LOG_LEVEL: "loud",
  });
  assertEquals(got.length, Object.keys(bad).length, got.join("\n"));
  for (const [name, re] of Object.entries(bad)) {
    assertMatch(got.find((p) => p.startsWith(`${name}:`)) ?? `${name}: (not reported)`, re);
  }
});

Deno.test("PUBLIC_BASE_URL must be https in deploy mode and off localnet; http is for a local chain", () => {
  assertEquals(problems({ NETWORK: "devnet", PUBLIC_BASE_URL: "http://tokens.example.test" }), [
    "PUBLIC_BASE_URL: must be set to an https URL on devnet",
  ]);
  assertEquals(
    problems({ NETWORK: "mainnet-beta", PUBLIC_BASE_URL: "http://tokens.example.test" }),
    ["PUBLIC_BASE_URL: must be set to an https URL on mainnet-beta"],
  );
  const deploy = {
    DEPLOY_MODE: "1",
    TREASURY_ADDRESS: "11111111111111111111111111111112",
    KEY_PEPPER: "p".repeat(32),
    SOLANA_RPC_URL: "https://rpc.example.test",
  };
  assertEquals(problems({ ...deploy, PUBLIC_BASE_URL: "http://tokens.example.test" }), [
    "PUBLIC_BASE_URL: must be set to an https URL in deploy mode",
  ]);
  assertEquals(
    loadConfig({ ...deploy, PUBLIC_BASE_URL: "https://tokens.example.test/" }).publicBaseUrl,
    "https://tokens.example.test",
  );
  assertEquals(loadConfig({ PUBLIC_BASE_URL: "http://localhost:8000" }).network, "localnet");
  // Unset is the local http default: not off localnet.
  assertEquals(problems({ NETWORK: "mainnet-beta" }), [
    "PUBLIC_BASE_URL: must be set to an https URL on mainnet-beta",
  ]);
});

Deno.test("deploy mode (DEPLOY_MODE=1 or DENO_DEPLOYMENT_ID) requires its secrets, named one by one", () => {
  const missing = [
    "TREASURY_ADDRESS: required in deploy mode (no local files)",
    "KEY_PEPPER: required in deploy mode (no local files)",
    "SOLANA_RPC_URL: required in deploy mode (no local files)",
    "PUBLIC_BASE_URL: required in deploy mode (no local files)",
  ];
  assertEquals(problems({ DEPLOY_MODE: "1" }), missing);
  assertEquals(problems({ DENO_DEPLOYMENT_ID: "abc123" }), missing);
  assertEquals(loadConfig({ DENO_DEPLOYMENT_ID: "abc123", DEPLOY_MODE: "0" }).deployMode, false);
  assertEquals(
    problems({ DEPLOY_MODE: "1", TREASURY_ADDRESS: "11111111111111111111111111111112" }).length,
    3,
  );
});

Deno.test("defaults: an empty environment is a working local configuration", () => {
  const c = loadConfig({});
  assertEquals(c.port, 8000);
  assertEquals(c.hostname, "127.0.0.1");
  assertEquals(c.dataDir, ".data");
  assertEquals(c.publicBaseUrl, "http://127.0.0.1:8000");
  assertEquals(c.hostedBaseUrl, null);
  assertEquals(c.solanaRpcUrl, null);
  assertEquals(c.network, "localnet");
  assertEquals(c.keyPrefix, "tcb");
  assertEquals(c.limits, {
    requestsPerHour: 600,
    portalRequestsPerHour: 600,
    tokensPerDay: 25,
    actionsBuildsPerWalletPerDay: 5,
    actionsRequestsPerIpPerHour: 30,
    metadataPerDay: 100,
    imageBytes: 1048576,
    imageMaxWidth: 4096,
    imageMaxHeight: 4096,
    hostedItemsPerKey: 5000,
  });
  assertEquals(c.fees, { accessUsd: 10, tokenUsd: 2.99, updateUsd: 0 });
  assertEquals(c.conduct, {
    refusePayerAfter: 1,
    keyWalletTolerated: 3,
    share: 0.5,
    minPayers: 10,
  });
  assertEquals(c.wellKnownNames, DEFAULT_WELL_KNOWN_NAMES);
  assertEquals(c.adminToken, null);
  assertEquals(c.deployMode, false);
  assertEquals(loadConfig({ WELL_KNOWN_NAMES: " Foo , ,Bar" }).wellKnownNames, ["Foo", "Bar"]);
});

Deno.test("every setting src/config.ts reads is documented in docs/operations.md", async () => {
  const names = ENV_NAMES;
  assert(names.length > 25, `found ${names.length} settings`);
  assert(names.includes("SUSPEND_MIN_UNVERIFIED_PAYERS"), "a policy module's own settings count");
  const doc = await Deno.readTextFile(`${ROOT}docs/operations.md`);
  const documented = new Set([...doc.matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\|/gm)].map((m) => m[1]));
  assertEquals(names.filter((n) => !documented.has(n)), [], "undocumented settings");
});

Deno.test("main.ts prints the problems and exits 2 on a bad configuration", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--config",
        `${ROOT}deno.json`,
        "--unstable-kv",
        "--unstable-cron",
        "-A",
        `${ROOT}src/main.ts`,
      ],
      cwd,
      clearEnv: true,
      env: { PORT: "http", NETWORK: "testnet", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 2, err);
    assertMatch(err, /invalid configuration:\n {2}PORT: .*\n {2}NETWORK: /);
    assertEquals(
      [...Deno.readDirSync(cwd)],
      [],
      "nothing created before the configuration is valid",
    );
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
