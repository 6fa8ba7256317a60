/**
 * A hosted document obeys the well-known-names rule, and a build pointing at one of our hosted
 * documents must carry its name and symbol (item 2 of the hostile-content issue).
 */
import { assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

Deno.test("hosted documents are checked, and a build must carry its hosted document's name and symbol", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const image = toBase64(makePng(2, 2));
    const host = (name: string, symbol: string) =>
      h.request("/v1/metadata", {
        method: "POST",
        headers: bearer(apiKey),
        json: { name, symbol, imageBase64: image },
      });
    const build = async (name: string, symbol: string, metadataUri: string) => {
      const res = await h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(apiKey),
        json: { payer: wallet.publicKey.toBase58(), name, symbol, metadataUri, supply: "1000" },
      });
      return { status: res.status, body: await res.json() };
    };

    // The impersonating document of the issue is not hosted.
    const usdc = await host("USD Coin", "USDC");
    assertEquals(usdc.status, 400);
    const uf = (await usdc.json()).error.fields;
    assertMatch(uf.name, /"USD Coin"/);
    assertMatch(uf.symbol, /"USDC"/);

    const innocent = await host("Innocent", "INN");
    assertEquals(innocent.status, 201);
    const { metadataUri } = await innocent.json();

    // Another name and symbol under our document: both named, with the document's values.
    const other = await build("Other Name", "OTH", metadataUri);
    assertEquals(other.status, 400, JSON.stringify(other.body));
    assertEquals(other.body.error.fields, {
      name: 'must be "Innocent", the name of the hosted document at metadataUri',
      symbol: 'must be "INN", the symbol of the hosted document at metadataUri',
    });
    // Only the symbol differs (case counts: wallets show it as written).
    const symbolOnly = await build("Innocent", "inn", metadataUri);
    assertEquals(Object.keys(symbolOnly.body.error.fields), ["symbol"]);

    // A URL of ours that hosts nothing is refused.
    const missing = metadataUri.replace(/[0-9a-f]{32}/, "0".repeat(32));
    const none = await build("Innocent", "INN", missing);
    assertEquals(none.status, 400);
    assertMatch(none.body.error.fields.metadataUri, /no document is hosted/);

    // The matching build goes through.
    const ok = await build("Innocent", "INN", metadataUri);
    assertEquals(ok.status, 201, JSON.stringify(ok.body));

    // A caller's own external URI is not fetched; only the name rules apply to it.
    const external = await build("Innocent", "INN", "https://example.com/other.json");
    assertEquals(external.status, 201, JSON.stringify(external.body));
  } finally {
    await h.close();
  }
});
