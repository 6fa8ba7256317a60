import { assertEquals } from "../support/assert.ts";
import { defaultKvPath, defaultRpcUrl } from "../../src/cli/kv.ts";

Deno.test("operator tools find the service's KV and RPC the way `deno task start` sets them up", () => {
  // The embedded chain on its default port, as `deno task start` runs it (audit --verify-chain).
  assertEquals(defaultRpcUrl({}), "http://127.0.0.1:8899");
  assertEquals(defaultRpcUrl({ CHAIN_PORT: "8923" }), "http://127.0.0.1:8923");
  assertEquals(
    defaultRpcUrl({ SOLANA_RPC_URL: "https://rpc.example.test", CHAIN_PORT: "1" }),
    "https://rpc.example.test",
  );
  assertEquals(defaultKvPath({}), ".data/kv.sqlite3");
  assertEquals(defaultKvPath({ DATA_DIR: "/srv/tcb/" }), "/srv/tcb/kv.sqlite3");
});
