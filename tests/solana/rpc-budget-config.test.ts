/** Where the RPC budget's limits come from: the RPC URL by default, the env when set. */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";

const PUBLIC = { NETWORK: "mainnet-beta", PUBLIC_BASE_URL: "https://tokens.example.com" };

Deno.test("rpc budget config: the public limits on a public endpoint, unlimited on a custom RPC", () => {
  for (
    const host of ["api.mainnet-beta.solana.com", "api.devnet.solana.com", "api.testnet.solana.com"]
  ) {
    const c = loadConfig({ ...PUBLIC, SOLANA_RPC_URL: `https://${host}` });
    assertEquals([c.rpcBudget.total, c.rpcBudget.perMethod], [100, 40], host);
  }
  const custom = loadConfig({ ...PUBLIC, SOLANA_RPC_URL: "https://mainnet.example-rpc.com/k" });
  assertEquals([custom.rpcBudget.total, custom.rpcBudget.perMethod], [null, null]);
  // The embedded chain: unlimited unless it enforces the public limits.
  assertEquals(loadConfig({}).rpcBudget.total, null);
  const limited = loadConfig({ CHAIN_RPC_LIMITS: "public" });
  assertEquals([limited.rpcBudget.total, limited.rpcBudget.perMethod], [100, 40]);
  assertEquals(limited.chainRpcLimits, "public");
  assertEquals([limited.rpcBudget.userWaitMs, limited.rpcBudget.backgroundShare], [2_000, 0.5]);
});

Deno.test('rpc budget config: set limits win, "unlimited" lifts one, bad values are named', () => {
  const c = loadConfig({
    ...PUBLIC,
    SOLANA_RPC_URL: "https://api.mainnet-beta.solana.com",
    RPC_BUDGET_PER_10S: "500",
    RPC_BUDGET_PER_METHOD_PER_10S: "unlimited",
    RPC_BUDGET_USER_WAIT_MS: "0",
    RPC_BUDGET_BACKGROUND_SHARE: "0.25",
  });
  assertEquals(c.rpcBudget, { total: 500, perMethod: null, userWaitMs: 0, backgroundShare: 0.25 });
  let e: unknown = null;
  try {
    loadConfig({
      RPC_BUDGET_PER_10S: "-3",
      RPC_BUDGET_BACKGROUND_SHARE: "0",
      CHAIN_RPC_LIMITS: "x",
    });
  } catch (err) {
    e = err;
  }
  assert(e instanceof ConfigError, String(e));
  const text = e.problems.join("\n");
  for (const f of ["RPC_BUDGET_PER_10S", "RPC_BUDGET_BACKGROUND_SHARE", "CHAIN_RPC_LIMITS"]) {
    assertMatch(text, new RegExp(f));
  }
});
