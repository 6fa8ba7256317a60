/**
 * A build pointing at one of our hosted documents must carry its name and symbol. The same
 * document is reachable under other spellings of its URL (a query or fragment, dot segments, the
 * host written differently, another host name of the same service): each must be held to the
 * same rule, or "Innocent" ships under a hosted "Real Project" document.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

Deno.test("hosted-document match: every spelling of a hosted document's URL is held to its name and symbol", async () => {
  const h = await startHarness({ env: { PUBLIC_BASE_URL: "https://tokens.example" } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const hosted = await h.request("/v1/metadata", {
      method: "POST",
      headers: bearer(apiKey),
      json: { name: "Real Project", symbol: "REAL", imageBase64: toBase64(makePng(2, 2)) },
    });
    assertEquals(hosted.status, 201);
    const { metadataUri } = await hosted.json();
    const id = /\/m\/([0-9a-f]{32})\.json$/.exec(metadataUri)![1];
    assertEquals(metadataUri, `https://tokens.example/m/${id}.json`);

    const variants = [
      `${metadataUri}?v=1`,
      `${metadataUri}#x`,
      `https://tokens.example/m/./${id}.json`,
      `https://tokens.example/x/../m/${id}.json`,
      `HTTPS://TOKENS.EXAMPLE/m/${id}.json`,
      `https://tokens.example:443/m/${id}.json`,
      `https://tokens.example./m/${id}.json`,
      `https://tokens.example/m/%${id.charCodeAt(0).toString(16)}${id.slice(1)}.json`,
      // Another name of the same deployment (Deno Deploy's own domain beside a custom one).
      `https://project.deno.dev/m/${id}.json`,
    ];
    // The server answers such spellings with the document.
    const served = await h.request(`/m/%${id.charCodeAt(0).toString(16)}${id.slice(1)}.json?v=1`);
    assertEquals(served.status, 200);
    assertEquals((await served.json()).name, "Real Project");
    for (const uri of variants) {
      const res = await h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(apiKey),
        json: {
          payer: wallet.publicKey.toBase58(),
          name: "Innocent",
          symbol: "INN",
          metadataUri: uri,
          supply: "1000",
        },
      });
      const body = await res.json();
      assertEquals(res.status, 400, `${uri} was accepted: ${JSON.stringify(body)}`);
      assert(
        body.error.fields.name || body.error.fields.metadataUri,
        `${uri}: ${JSON.stringify(body.error.fields)}`,
      );
    }
    // The document's own name and symbol still build under its URL.
    const ok = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: {
        payer: wallet.publicKey.toBase58(),
        name: "Real Project",
        symbol: "REAL",
        metadataUri,
        supply: "1000",
      },
    });
    assertEquals(ok.status, 201, JSON.stringify(await ok.clone().json()));
  } finally {
    await h.close();
  }
});
