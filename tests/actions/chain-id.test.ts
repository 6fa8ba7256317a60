/** X-Blockchain-Ids names the configured cluster by its CAIP-2 id. */
import { assertEquals } from "../support/assert.ts";
import { blockchainId } from "../../src/actions/chain-id.ts";
import type { Services } from "../../src/services.ts";

const on = (network: string, genesis = "unused") =>
  ({
    config: { network },
    connection: { getGenesisHash: () => Promise.resolve(genesis) },
  }) as unknown as Services;

Deno.test("mainnet and devnet: the published CAIP-2 ids; a local chain: its genesis hash", async () => {
  assertEquals(await blockchainId(on("mainnet-beta")), "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
  assertEquals(await blockchainId(on("devnet")), "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  // CAIP-2 takes the first 32 characters of the base58 genesis hash (mainnet's is 5eykt4U...).
  assertEquals(
    await blockchainId(on("localnet", "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d")),
    "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  );
});
