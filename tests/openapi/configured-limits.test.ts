/**
 * The served OpenAPI document states the limits and fees the service runs with: a service started
 * with non-default limits serves a document whose numbers follow them (and /v1/pricing's), and
 * nothing of the defaults is left in the places that state them.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { openApiDocument } from "../../src/openapi/document.ts";
import { loadConfig } from "../../src/config.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const ENV = {
  REQUESTS_PER_HOUR: "77",
  TOKENS_PER_DAY: "3",
  METADATA_PER_DAY: "9",
  HOSTED_ITEMS_PER_KEY: "4321",
  IMAGE_MAX_BYTES: "524288",
  IMAGE_MAX_WIDTH: "1500",
  IMAGE_MAX_HEIGHT: "1200",
  VANITY_BUDGET_MS: "2500",
  TOKEN_FEE_USD: "4.5",
  ACCESS_FEE_USD: "25",
};

Deno.test("given non-default limits and fees, when the document is served, then its numbers are theirs", async () => {
  const h = await startHarness({ env: ENV });
  try {
    const res = await h.request("/v1/openapi.json");
    assertEquals(res.status, 200);
    const doc: Json = await res.json();
    const defaults: Json = JSON.parse(
      JSON.stringify(openApiDocument({ serverUrl: h.base })),
    );
    // The same shape as under the defaults: only texts and example values move.
    assertEquals(Object.keys(doc.paths), Object.keys(defaults.paths));
    assertEquals(Object.keys(doc.components.schemas), Object.keys(defaults.components.schemas));

    const paths = doc.paths;
    const components = doc.components;
    const metadata = paths["/v1/metadata"].post;
    assert(metadata.description.includes("daily metadata limit (9 per UTC day)"));
    assert(metadata.description.includes("the 4,321 hosted items per key"));
    const tokens = paths["/v1/tokens"].post;
    assert(tokens.description.includes("daily token limit (3 per UTC day)"), tokens.description);
    assert(tokens.description.includes("our fee, 4.5 USD"));

    const image = components.schemas.MetadataRequest.properties;
    for (const field of ["imageUrl", "imageBase64"]) {
      assert(image[field].description.includes("up to 512 KiB and 1500 x 1200 pixels"), field);
      assert(!image[field].description.includes("1 MiB"), field);
    }
    const vanity = components.schemas.TokenBuildRequest.properties.vanity.description;
    assert(vanity.includes("time budget (2.5 s)"), vanity);
    const vanityTimeout = components.responses.Unprocessable.content["application/json"]
      .examples.vanity_timeout.value.error;
    assertEquals(vanityTimeout.fields.budgetMs, 2500);
    assert(vanityTimeout.message.includes("within 2500 ms"));

    const tooMany = components.responses.TooManyRequests.description;
    assert(tooMany.includes("(77 per key)") && tooMany.includes("token (3)"), tooMany);
    assert(tooMany.includes("metadata (9)"), tooMany);
    assert(components.headers["RateLimit-Policy"].description.includes('"hour";q=77;w=3600'));
    assert(doc.info.description.includes("25 USD once for an API key, 4.5 USD per token"));
    assert(components.securitySchemes.bearerAuth.description.includes("(25 USD)"));

    // The examples /docs shows: the pricing and key examples carry the limits /v1/pricing
    // answers with, and the fee follows TOKEN_FEE_USD (4.5 USD at the examples' 150 USD/SOL).
    const pricing = await (await h.request("/v1/pricing")).json();
    const pricingExample = paths["/v1/pricing"].get.responses["200"].content["application/json"]
      .example;
    assertEquals(pricingExample.limits, pricing.limits);
    assertEquals(pricing.limits.requestsPerHour, 77);
    assertEquals(pricing.limits.imageBytes, 524288);
    assertEquals(pricingExample.token.usd, 4.5);
    assertEquals(pricingExample.token.lamports, "30000000");
    assertEquals(pricingExample.access.usd, 25);
    const meExample = paths["/v1/me"].get.responses["200"].content["application/json"].example;
    assertEquals(meExample.limits, { tokensPerDay: 3, metadataPerDay: 9, requestsPerHour: 77 });
    const built = paths["/v1/tokens"].post.responses["201"].content["application/json"].example;
    assertEquals(built.fee.lamports, "30000000");
    assertEquals(built.costs.serviceFeeLamports, "30000000");
    const { serviceFeeLamports: _fee, totalLamports, ...network } = built.costs;
    assertEquals(
      BigInt(totalLamports),
      Object.values(network).reduce((a: bigint, v) => a + BigInt(v as string), 30000000n),
    );

    // And the service applies what its document states: an image of exactly IMAGE_MAX_BYTES is
    // hosted, one byte more is 400 on imageBase64.
    const { apiKey } = await h.newApiKey();
    const host = async (bytes: Uint8Array) => {
      const r = await h.request("/v1/metadata", {
        method: "POST",
        headers: bearer(apiKey),
        json: { name: "Limit Token", symbol: "LIM", imageBase64: toBase64(bytes) },
      });
      return { status: r.status, body: await r.json() };
    };
    const exact = await host(makePng(16, 16, 524288));
    assertEquals(exact.status, 201, JSON.stringify(exact.body));
    const over = await host(makePng(16, 16, 524289));
    assertEquals(over.status, 400);
    assertEquals(Object.keys(over.body.error.fields), ["imageBase64"]);
    assert(over.body.error.fields.imageBase64.includes("larger than 524288"));

    // Made from the service's own Config: the same as the document built for it directly.
    assertEquals(
      doc,
      JSON.parse(JSON.stringify(openApiDocument({ serverUrl: h.base, config: h.services.config }))),
    );
  } finally {
    await h.close();
  }
});

Deno.test("given the default configuration, the document states the default limits", () => {
  const doc: Json = JSON.parse(JSON.stringify(openApiDocument({
    serverUrl: "https://api.example.test",
    config: loadConfig({}),
  })));
  const tokens = doc.paths["/v1/tokens"].post.description;
  assert(tokens.includes("daily token limit (25 per UTC day)"));
  const image = doc.components.schemas.MetadataRequest.properties.imageUrl.description;
  assert(image.includes("up to 1 MiB and 4096 x 4096 pixels"), image);
  assert(doc.components.headers["RateLimit-Policy"].description.includes('"hour";q=600;w=3600'));
  assertEquals(
    doc,
    JSON.parse(JSON.stringify(openApiDocument({ serverUrl: "https://api.example.test" }))),
  );
});

Deno.test("IMAGE_MAX_BYTES is bounded by what POST /v1/metadata can carry", () => {
  assertEquals(loadConfig({ IMAGE_MAX_BYTES: "2048" }).limits.imageBytes, 2048);
  let problem = "";
  try {
    loadConfig({ IMAGE_MAX_BYTES: "2000000" });
  } catch (e) {
    problem = (e as Error).message;
  }
  assert(problem.includes("IMAGE_MAX_BYTES"), problem);
});
