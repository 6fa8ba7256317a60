/**
 * A Blinks client library from npm (@dialectlabs/blinks-core, what dial.to's blinks are built
 * on) fetches and parses the Action's GET as a wallet's page would: its title, icon, and one
 * form action with our parameters.
 */
import { type BlinkAdapter, BlinkInstance, setProxyUrl } from "@dialectlabs/blinks-core";
import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";

Deno.test("a Blinks client parses the Action's form", async () => {
  const h = await startHarness();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (req) => h.app.fetch(req),
  );
  try {
    setProxyUrl(null as unknown as string); // talk to this origin directly, not through dial.to
    const url = `http://127.0.0.1:${server.addr.port}/v1/actions/create-token`;
    const blink = await BlinkInstance.fetch(url);
    assertEquals(blink.type, "action");
    assertEquals(blink.title, "Create a token");
    assert(blink.icon.endsWith("/v1/actions/create-token/icon.png"), blink.icon);
    assertEquals(blink.error, null);
    assertEquals(blink.actions.length, 1);
    const [form] = blink.actions;
    assertEquals(form.label, "Create token");
    const params = (form as unknown as { parameters: { name: string; required?: boolean }[] })
      .parameters.map((p) => p.name);
    assertEquals(params, ["name", "symbol", "supply", "decimals", "imageUrl", "description"]);

    // The client's compatibility check reads X-Action-Version and X-Blockchain-Ids: a wallet on
    // this chain supports the Action, one on mainnet only does not.
    const chainId = `solana:${(await h.services.connection.getGenesisHash()).slice(0, 32)}`;
    const wallet = (ids: string[]) =>
      ({ metadata: { supportedBlockchainIds: ids } }) as unknown as BlinkAdapter;
    assertEquals(await blink.isSupported(wallet([chainId])), { isSupported: true });
    const mainnetOnly = await blink.isSupported(
      wallet(["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]),
    );
    assertEquals(mainnetOnly.isSupported, false);
  } finally {
    await server.shutdown();
    await h.close();
  }
});
