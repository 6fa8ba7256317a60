/**
 * Hosted files are sandboxed (item 5 of the hostile-content issue): every /m/ and /i/ answer
 * carries the sandbox policy, and HOSTED_BASE_URL serves them from an origin of their own.
 */
import { assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { HOSTED_CSP } from "../../src/routes/hosted.ts";
import { loadConfig } from "../../src/config.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

Deno.test("every /m/ and /i/ answer carries Content-Security-Policy: default-src 'none'; sandbox", async () => {
  const h = await startHarness();
  try {
    assertEquals(HOSTED_CSP, "default-src 'none'; sandbox");
    const { apiKey } = await h.newApiKey();
    const hosted = await h.request("/v1/metadata", {
      method: "POST",
      headers: bearer(apiKey),
      json: { name: "Sandboxed", symbol: "SBX", imageBase64: toBase64(makePng(3, 3)) },
    });
    assertEquals(hosted.status, 201);
    const { metadataUri, imageUri } = await hosted.json();
    const m = new URL(metadataUri).pathname;
    const i = new URL(imageUri).pathname;
    const etag = (await h.request(m)).headers.get("etag")!;
    const cases: [string, RequestInit, number][] = [
      [m, {}, 200],
      [i, {}, 200],
      [m, { method: "HEAD" }, 200],
      [i, { method: "HEAD" }, 200],
      [m, { headers: { "if-none-match": etag } }, 304],
      [`/m/${"0".repeat(32)}.json`, {}, 404],
      [`/i/${"0".repeat(64)}.png`, {}, 404],
      ["/m/whatever", {}, 404],
      ["/i/a/b/c", {}, 404],
      [m, { method: "POST" }, 404],
      [i, { method: "OPTIONS", headers: { "access-control-request-method": "GET" } }, 204],
    ];
    for (const [path, init, status] of cases) {
      const res = await h.request(path, init);
      await res.body?.cancel();
      assertEquals(res.status, status, `${init.method ?? "GET"} ${path}`);
      assertEquals(
        res.headers.get("content-security-policy"),
        HOSTED_CSP,
        `${init.method ?? "GET"} ${path}`,
      );
    }
    // The API and the portal are not sandboxed by it (they have their own headers).
    const pricing = await h.request("/v1/pricing");
    await pricing.body?.cancel();
    assertEquals(pricing.headers.get("content-security-policy") === HOSTED_CSP, false);
  } finally {
    await h.close();
  }
});

Deno.test("HOSTED_BASE_URL: files are linked and served on their own origin, the portal's redirects there", async () => {
  const hostedBase = "http://files.localhost:8000";
  const h = await startHarness({ env: { HOSTED_BASE_URL: hostedBase } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const res = await h.request("/v1/metadata", {
      method: "POST",
      headers: bearer(apiKey),
      json: { name: "Apart", symbol: "APT2", imageBase64: toBase64(makePng(3, 3)) },
    });
    assertEquals(res.status, 201);
    const { metadataUri, imageUri } = await res.json();
    assertEquals(metadataUri.startsWith(`${hostedBase}/m/`), true, metadataUri);
    assertEquals(imageUri.startsWith(`${hostedBase}/i/`), true, imageUri);

    // Served on the hosted origin, sandboxed, and the document links the image there.
    const doc = await h.app.request(metadataUri);
    assertEquals(doc.status, 200);
    assertEquals(doc.headers.get("content-security-policy"), HOSTED_CSP);
    assertEquals((await doc.json()).image, imageUri);
    const img = await h.app.request(imageUri);
    assertEquals(img.status, 200);
    await img.body?.cancel();

    // The hosted origin serves nothing else.
    for (const path of ["/v1/pricing", "/portal", "/"]) {
      const other = await h.app.request(`${hostedBase}${path}`);
      await other.body?.cancel();
      assertEquals(other.status, 404, path);
    }
    // The portal's origin sends hosted paths to the hosted origin.
    const path = new URL(metadataUri).pathname;
    const moved = await h.request(path);
    assertEquals(moved.status, 308);
    assertEquals(moved.headers.get("location"), metadataUri);

    // A build pointing at the hosted document is accepted with its name and symbol only.
    const build = (name: string) =>
      h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(apiKey),
        json: {
          payer: wallet.publicKey.toBase58(),
          name,
          symbol: "APT2",
          metadataUri,
          supply: "10",
        },
      });
    const wrong = await build("Not Apart");
    assertEquals(wrong.status, 400);
    assertEquals(Object.keys((await wrong.json()).error.fields), ["name"]);
    const ok = await build("Apart");
    assertEquals(ok.status, 201, await ok.text());
  } finally {
    await h.close();
  }
});

Deno.test("HOSTED_BASE_URL must be another origin, https off localnet, without a path", () => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (e) {
      return (e as { problems: string[] }).problems;
    }
  };
  assertEquals(problems({ HOSTED_BASE_URL: "http://127.0.0.1:8000" }).length, 1);
  assertEquals(problems({ HOSTED_BASE_URL: "http://files.localhost/x" }).length, 1);
  assertEquals(problems({ HOSTED_BASE_URL: "http://files.localhost" }), []);
  assertEquals(
    problems({
      NETWORK: "devnet",
      PUBLIC_BASE_URL: "https://app.example",
      HOSTED_BASE_URL: "http://files.example",
    }).length,
    1,
  );
  assertEquals(
    loadConfig({
      NETWORK: "devnet",
      PUBLIC_BASE_URL: "https://app.example",
      HOSTED_BASE_URL: "https://files.example/",
    }).hostedBaseUrl,
    "https://files.example",
  );
});
