import { Transaction } from "@solana/web3.js";
import { Buffer } from "node:buffer";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { DisplayCheck } from "../../src/metadata/display-check-schema.ts";
import { openApiDocument } from "../../src/openapi/document.ts";
import * as S from "../../src/openapi/schemas.ts";
import { TokenBuilt, TokenRefreshed } from "../../src/tokens/build-response.ts";
import { BuildRecord } from "../../src/tokens/build-record.ts";
import * as I from "../../src/openapi/integrator.ts";
import { TokenUpdateBuilt, TokenUpdateRecord } from "../../src/tokens/update-response.ts";

type Json = Record<string, unknown>;
const doc = openApiDocument({ serverUrl: "https://api.example.test" }) as unknown as Json;
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function operations(d: Json): [string, string, Json][] {
  const out: [string, string, Json][] = [];
  for (const [path, item] of Object.entries(d.paths as Record<string, Json>)) {
    for (const m of METHODS) if (item[m]) out.push([path, m, item[m] as Json]);
  }
  return out;
}

function pointer(d: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  return ref.slice(2).split("/").reduce<unknown>(
    (o, k) => (o as Json | undefined)?.[k.replaceAll("~1", "/").replaceAll("~0", "~")],
    d,
  );
}

function refs(node: unknown, at = "#", out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((n, i) => refs(n, `${at}/${i}`, out));
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push([at, v]);
      else refs(v, `${at}/${k}`, out);
    }
  }
  return out;
}

Deno.test("the document is OpenAPI 3.1.0, version 1.0.0, with bearer security and an error schema", () => {
  assertEquals(doc.openapi, "3.1.0");
  assertEquals((doc.info as Json).version, "1.0.0");
  const components = doc.components as Json;
  assertEquals((components.securitySchemes as Json).bearerAuth, {
    type: "http",
    scheme: "bearer",
    description: ((components.securitySchemes as Json).bearerAuth as Json).description,
  });
  assertEquals(doc.security, [{ bearerAuth: [] }]);
  const error = (components.schemas as Json).Error as Json;
  assertEquals(error.required as string[], ["error"]);
  const inner = (error.properties as Json).error as Json;
  assertEquals([...(inner.required as string[])].sort(), ["code", "fields", "message"]);
  // Every code of the seed's error table is in the schema.
  const codes = ((inner.properties as Json).code as Json).enum as string[];
  for (
    const c of [
      "invalid_request",
      "insufficient_funds",
      "simulation_failed",
      "unauthorized",
      "not_found",
      "payload_too_large",
      "rate_limited",
      "daily_limit",
      "price_unavailable",
      "server_error",
    ]
  ) assert(codes.includes(c), c);
});

Deno.test("every operation has responses with a success, an operationId, and every $ref resolves", () => {
  const ids = new Set<string>();
  for (const [path, method, op] of operations(doc)) {
    const where = `${method.toUpperCase()} ${path}`;
    const responses = op.responses as Json;
    assert(responses && Object.keys(responses).length > 0, `${where} has responses`);
    assert(Object.keys(responses).some((s) => /^2\d\d$/.test(s)), `${where} has a 2xx`);
    for (const [status, r] of Object.entries(responses)) {
      assertMatch(status, /^[1-5]\d\d$/);
      const resolved = ((r as Json).$ref ? pointer(doc, (r as Json).$ref as string) : r) as Json;
      assert(typeof resolved?.description === "string", `${where} ${status} has a description`);
      if (!/^2/.test(status)) {
        const schema = ((resolved.content as Json)["application/json"] as Json).schema as Json;
        assertEquals(schema.$ref, "#/components/schemas/Error", `${where} ${status} uses Error`);
      }
    }
    assert(typeof op.operationId === "string" && !ids.has(op.operationId), `${where} operationId`);
    ids.add(op.operationId as string);
    for (const p of (path.match(/\{(\w+)\}/g) ?? [])) {
      const name = p.slice(1, -1);
      const params = ((op.parameters ?? []) as Json[]).map((x) =>
        (x.$ref ? pointer(doc, x.$ref as string) : x) as Json
      );
      assert(
        params.some((x) => x.name === name && x.in === "path" && x.required),
        `${where} ${name}`,
      );
    }
  }
  const all = refs(doc);
  assert(all.length > 50);
  for (const [at, ref] of all) {
    assert(pointer(doc, ref) !== undefined, `${at}: ${ref} does not resolve`);
  }
});

Deno.test("the seed's seven endpoints are described with their success statuses and bodies", () => {
  const expect: [string, string, string, string | null, string | null][] = [
    ["get", "/v1/pricing", "200", null, "Pricing"],
    ["get", "/v1/me", "200", null, "Me"],
    ["post", "/v1/metadata", "201", "MetadataRequest", "MetadataCreated"],
    ["post", "/v1/tokens", "201", "TokenBuildRequest", "TokenBuilt"],
    ["post", "/v1/transactions", "202", "RelayRequest", "RelayAccepted"],
    ["get", "/v1/transactions/{signature}", "200", null, "Verification"],
    ["get", "/v1/tokens/{mint}", "200", null, "BuildRecord"],
  ];
  const paths = doc.paths as Record<string, Json>;
  for (const [m, path, status, req, res] of expect) {
    const op = paths[path]?.[m] as Json;
    assert(op, `${m} ${path}`);
    const body =
      (((op.responses as Json)[status] as Json).content as Json)["application/json"] as Json;
    assertEquals((body.schema as Json).$ref, `#/components/schemas/${res}`);
    if (req) {
      const rb = ((op.requestBody as Json).content as Json)["application/json"] as Json;
      assertEquals((rb.schema as Json).$ref, `#/components/schemas/${req}`);
    }
    // Public only where the seed says so.
    assertEquals(
      op.security === undefined ? "keyed" : "public",
      path === "/v1/pricing" ? "public" : "keyed",
    );
  }
  const schemas = (doc.components as Json).schemas as Record<string, Json>;
  const metadata = schemas.MetadataRequest;
  assertEquals(metadata.additionalProperties, false);
  assertEquals([...(metadata.required as string[])].sort(), ["name", "symbol"]);
  assertEquals(((metadata.properties as Json).name as Json).maxLength, 32);
  assertEquals(metadata.oneOf, [{ required: ["imageUrl"] }, { required: ["imageBase64"] }]);
  const token = schemas.TokenBuildRequest;
  assertEquals([...(token.required as string[])].sort(), [
    "metadataUri",
    "name",
    "payer",
    "symbol",
  ]);
  assertEquals(((token.properties as Json).decimals as Json).default, 9);
  assertEquals(((token.properties as Json).revokeFreeze as Json).default, true);
});

Deno.test("every route the app serves under /v1 is in the document, and the served document is this one", async () => {
  const h = await startHarness();
  try {
    const described = new Set(
      operations(doc).map(([path, m]) => `${m.toUpperCase()} ${path}`),
    );
    const served = new Set<string>();
    for (const r of h.app.routes) {
      if (!r.path.startsWith("/v1/") || r.path.includes("*") || r.method === "ALL") continue;
      // The Solana Action is not the keyed JSON API: its reference is the Actions spec, and
      // tests/actions/ check it against the spec's own types.
      if (r.path.startsWith("/v1/actions/")) continue;
      served.add(`${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
    }
    for (
      const s of [
        "GET /v1/pricing",
        "GET /v1/me",
        "POST /v1/metadata",
        "POST /v1/tokens",
        "GET /v1/tokens/{mint}",
        "POST /v1/transactions",
        "GET /v1/transactions/{signature}",
        "GET /v1/openapi.json",
      ]
    ) assert(served.has(s), `the app serves ${s}`);
    for (const s of served) assert(described.has(s), `${s} is served but not described`);

    const res = await h.request("/v1/openapi.json");
    assertEquals(res.status, 200);
    assertMatch(res.headers.get("content-type") ?? "", /^application\/json/);
    const servedDoc = await res.json();
    assertEquals(servedDoc.servers, [{ url: h.base }]);
    // The same document, built for the served base URL (the samples name it too).
    assertEquals(servedDoc, JSON.parse(JSON.stringify(openApiDocument({ serverUrl: h.base }))));
    assertEquals(
      { ...servedDoc, servers: null, paths: null },
      { ...JSON.parse(JSON.stringify(doc)), servers: null, paths: null },
    );
    assertEquals(Object.keys(servedDoc.paths), Object.keys(doc.paths as Json));
  } finally {
    await h.close();
  }
});

Deno.test("real responses parse with the documented schemas", async () => {
  const h = await startHarness();
  try {
    S.Pricing.strict().parse(await (await h.request("/v1/pricing")).json());
    const unauth = await h.request("/v1/me");
    assertEquals(unauth.status, 401);
    S.ErrorBody.parse(await unauth.json());
    S.ErrorBody.parse(await (await h.request("/v1/nope")).json());
    const { apiKey } = await h.newApiKey();
    const me = await h.request("/v1/me", { headers: bearer(apiKey) });
    S.Me.strict().parse(await me.json());
    const invalid = await h.request("/v1/tokens/not-a-mint", { headers: bearer(apiKey) });
    assertEquals(invalid.status, 400);
    const body = S.ErrorBody.parse(await invalid.json());
    assertEquals(body.error.code, "invalid_request");
    assertEquals(typeof body.error.fields.mint, "string");
    S.ErrorBody.parse(
      await (await h.request(`/v1/tokens/${h.treasury.publicKey.toBase58()}`, {
        headers: bearer(apiKey),
      })).json(),
    );
  } finally {
    await h.close();
  }
});

Deno.test("every operation has a curl and a TypeScript sample, and its success example parses with the response schema", () => {
  const schemaOf: Record<string, { parse(v: unknown): unknown }> = {
    Pricing: S.Pricing,
    Me: S.Me,
    MetadataCreated: S.MetadataCreated,
    DisplayCheck,
    TokenBuilt,
    TokenRefreshed,
    RelayAccepted: S.RelayAccepted,
    Verification: S.Verification,
    BuildRecord,
    BuildList: I.BuildList,
    Health: I.Health,
    WebhookEndpoint: I.WebhookEndpoint,
    WebhookEndpointCreated: I.WebhookEndpointCreated,
    WebhookEndpointList: I.WebhookEndpointList,
    WebhookDelivery: I.WebhookDelivery,
    WebhookDeliveryList: I.WebhookDeliveryList,
    TokenUpdateBuilt,
    TokenUpdateRecord,
  };
  for (const [path, method, op] of operations(doc)) {
    if (path === "/v1/openapi.json") continue;
    const where = `${method.toUpperCase()} ${path}`;
    const samples = op["x-codeSamples"] as { lang: string; label: string; source: string }[];
    assertEquals(samples?.map((x) => x.label), ["curl", "TypeScript"], where);
    const [curl, ts] = samples;
    assertMatch(curl.source, new RegExp(`^curl.*'https://api\\.example\\.test/v1/`), where);
    assertMatch(ts.source, /^const res = await fetch\("https:\/\/api\.example\.test\/v1\//, where);
    const body = (op.requestBody as Json | undefined)?.content as Json | undefined;
    if (body) {
      const example = (body["application/json"] as Json).example;
      assert(example !== undefined, `${where}: request example`);
      // Both samples send that very body.
      assert(curl.source.includes(`"${Object.keys(example as Json)[0]}"`), `${where}: curl body`);
      assert(ts.source.includes("JSON.stringify("), `${where}: TypeScript body`);
    }
    const [status, success] = Object.entries(op.responses as Record<string, Json>)
      .find(([code]) => /^2/.test(code))!;
    // A 204 (a deletion) has no body to give an example of.
    if (status === "204") continue;
    const media = (success.content as Json)["application/json"] as Json;
    const name = String((media.schema as Json).$ref).split("/").at(-1)!;
    schemaOf[name].parse(media.example);
    assert(media.example !== undefined, `${where} ${status}: success example`);
  }
});

Deno.test("/docs serves Swagger UI's reference from this origin, under a CSP naming no other origin", async () => {
  const h = await startHarness();
  try {
    const page = await h.request("/docs");
    assertEquals(page.status, 200);
    assertMatch(page.headers.get("content-type") ?? "", /^text\/html/);
    const csp = page.headers.get("content-security-policy") ?? "";
    assertMatch(csp, /default-src 'none'/);
    assertMatch(csp, /script-src 'self'(;|$)/);
    assertMatch(csp, /connect-src 'self'(;|$)/);
    assert(!/https?:|\*/.test(csp), "the CSP names no other origin");
    const html = await page.text();
    const links = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assertEquals(links.sort(), [
      "/docs/init.js",
      "/docs/swagger-ui-5.35.0.css",
      "/docs/swagger-ui-5.35.0.js",
      "/v1/openapi.json",
      "data:,",
    ]);
    assert(!/<script>/.test(html), "no inline script");

    const init = await h.request("/docs/init.js");
    assertMatch(init.headers.get("content-type") ?? "", /^text\/javascript/);
    const initText = await init.text();
    assert(!/https?:\/\//.test(initText), "the start-up script names no other origin");
    // The public validator badge (another origin) is off; try-it is pointed at this origin.
    assert(initText.includes('"validatorUrl": null'), "validator off");
    assert(initText.includes("url: location.origin"), "try-it calls this origin");

    const bundle = await h.request("/docs/swagger-ui-5.35.0.js");
    assertEquals(bundle.status, 200);
    assertMatch(bundle.headers.get("content-type") ?? "", /^text\/javascript/);
    assertMatch(bundle.headers.get("cache-control") ?? "", /immutable/);
    const js = await bundle.text();
    assert(js.length > 1_000_000 && js.includes("SwaggerUIBundle"), "the prebuilt bundle");
    assert(!js.includes("sourceMappingURL="), "no source map the service does not serve");

    const css = await h.request("/docs/swagger-ui-5.35.0.css");
    assertEquals(css.status, 200);
    assertMatch(css.headers.get("content-type") ?? "", /^text\/css/);
    assertMatch(css.headers.get("cache-control") ?? "", /immutable/);
    const style = await css.text();
    assert(style.includes(".swagger-ui"), "the renderer's stylesheet");
    assert(!style.includes("sourceMappingURL="), "no source map the service does not serve");
  } finally {
    await h.close();
  }
});

Deno.test("the reference's versioned bundle URL names the version deno.json installs", async () => {
  const { SWAGGER_UI_VERSION } = await import("../../src/openapi/reference-page.ts");
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assertEquals(
    config.imports["swagger-ui-dist/"],
    `npm:/swagger-ui-dist@${SWAGGER_UI_VERSION}/`,
  );
  const pkg = JSON.parse(
    await Deno.readTextFile(
      new URL("../../node_modules/swagger-ui-dist/package.json", import.meta.url),
    ),
  );
  assertEquals(pkg.version, SWAGGER_UI_VERSION);
});

Deno.test("the relay's request example is a signed legacy transaction the relay refuses by name", async () => {
  const op = (doc.paths as Record<string, Record<string, Json>>)["/v1/transactions"].post;
  const media = ((op.requestBody as Json).content as Record<string, Json>)["application/json"];
  const { transaction } = media.example as { transaction: string };
  const tx = Transaction.from(Buffer.from(transaction, "base64"));
  assert(tx.verifySignatures(), "every signature verifies");
  assertEquals(tx.serialize().toString("base64"), transaction, "canonical encoding");

  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const res = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: media.example,
    });
    assertEquals(res.status, 400);
    const body = await res.json();
    assertEquals(body.error.code, "invalid_request");
    assertMatch(body.error.fields.transaction, /^unknown build/);
  } finally {
    await h.close();
  }
});
