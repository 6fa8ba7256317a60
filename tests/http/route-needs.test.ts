/**
 * Every route carries the middleware it needs where it is defined (src/routes/needs.ts). The
 * table below is the /v1 surface: a new /v1 route fails here until someone decides what it needs.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { midHourHarness } from "../support/mid-hour-clock.ts";

const KEYED = ["apiKey", "rateLimit"];
const BODY_KEYED = ["bodyLimit", ...KEYED];
const IDEMPOTENT = [...BODY_KEYED, "idempotent"];

/** "METHOD path" -> the named middleware on the route, in the order a request meets them. */
const V1_NEEDS: Record<string, string[]> = {
  "GET /v1/pricing": [],
  "GET /v1/openapi.json": [],
  "GET /v1/health": [],
  "GET /v1/me": KEYED,
  "POST /v1/tokens": IDEMPOTENT,
  "GET /v1/tokens": KEYED,
  "GET /v1/tokens/:mint": KEYED,
  "POST /v1/tokens/:mint/refresh": IDEMPOTENT,
  "POST /v1/tokens/:mint/update": IDEMPOTENT,
  "GET /v1/tokens/:mint/updates/:updateId": KEYED,
  "POST /v1/metadata": IDEMPOTENT,
  "POST /v1/metadata/check": BODY_KEYED,
  "POST /v1/transactions": IDEMPOTENT,
  "GET /v1/transactions/:signature": KEYED,
  "POST /v1/webhooks": BODY_KEYED,
  "GET /v1/webhooks": KEYED,
  "GET /v1/webhooks/:id": KEYED,
  "DELETE /v1/webhooks/:id": KEYED,
  "GET /v1/webhooks/:id/deliveries": KEYED,
  "POST /v1/webhooks/:id/deliveries/:deliveryId/replay": BODY_KEYED,
  // The Solana Action: no key; its POST is limited per client address (and per wallet inside).
  "GET /v1/actions/create-token": [],
  "OPTIONS /v1/actions/create-token": [],
  "POST /v1/actions/create-token": ["bodyLimit", "rateLimit"],
  "GET /v1/actions/create-token/icon.png": [],
};
const NEEDS = new Set(["bodyLimit", "apiKey", "rateLimit", "idempotent"]);

Deno.test("route table: each /v1 route carries exactly the middleware it needs, in order", async () => {
  const h = await startHarness();
  try {
    const seen: Record<string, string[]> = {};
    for (const r of h.app.routes) {
      // ALL entries are the app-wide middleware and the wrong-method answers (tested below).
      if (r.method === "ALL" || !r.path.startsWith("/v1/")) continue;
      const needs = (seen[`${r.method} ${r.path}`] ??= []);
      if (NEEDS.has(r.handler.name)) needs.push(r.handler.name);
    }
    assertEquals(seen, V1_NEEDS);
  } finally {
    await h.close();
  }
});

Deno.test("every route that takes a body refuses one over its limit with 413, before any key check", async () => {
  const h = await startHarness({ env: { ADMIN_TOKEN: "admin-token-0123456789abcdef0123456789" } });
  try {
    const writes = h.app.routes.filter((r) => ["POST", "PUT", "PATCH"].includes(r.method));
    const paths = new Set(writes.map((r) => `${r.method} ${r.path.replaceAll(/:(\w+)/g, "x")}`));
    assert(paths.size >= 20, `${paths.size} routes take a body`);
    for (const route of paths) {
      const [method, path] = route.split(" ");
      const limit = path === "/v1/metadata" ? 2 * 1024 * 1024 : 64 * 1024;
      const send = (size: number) =>
        h.request(path, {
          method,
          headers: { "content-type": "application/json" },
          body: "x".repeat(size),
        });
      const over = await send(limit + 1);
      assertEquals(over.status, 413, route);
      const refused = await over.json();
      // The Solana Action answers the spec's ActionError, `{ message }`, for the same refusal.
      if (path.startsWith("/v1/actions/")) assert(typeof refused.message === "string", route);
      else assertEquals(refused.error.code, "payload_too_large", route);
      const at = await send(limit);
      assert(at.status !== 413, `${route}: ${at.status}`);
      await at.body?.cancel();
    }
  } finally {
    await h.close();
  }
});

Deno.test("a known path asked with a method it does not serve: 405 with Allow; a keyed one asks for the key first", async () => {
  // Mid-hour: the five requests it counts fall on one day.
  const h = await startHarness(midHourHarness());
  try {
    const { apiKey } = await h.newApiKey();
    for (
      const [method, path, allow] of [
        ["PUT", "/v1/me", "GET, HEAD"],
        ["DELETE", "/v1/tokens", "GET, HEAD, POST"],
        ["POST", "/v1/tokens/x", "GET, HEAD"],
        ["PATCH", "/v1/webhooks/x", "DELETE, GET, HEAD"],
      ]
    ) {
      const anonymous = await h.request(path, { method });
      assertEquals(anonymous.status, 401, `${method} ${path}`);
      assertEquals(anonymous.headers.get("www-authenticate"), 'Bearer realm="api"');
      await anonymous.body?.cancel();
      const keyed = await h.request(path, { method, headers: bearer(apiKey) });
      assertEquals(keyed.status, 405, `${method} ${path}`);
      assertEquals(keyed.headers.get("allow"), allow, `${method} ${path}`);
      assertEquals((await keyed.json()).error.code, "method_not_allowed");
    }
    // A public path with a wrong method: 405 too, without a key.
    const pricing = await h.request("/v1/pricing", { method: "DELETE" });
    assertEquals([pricing.status, pricing.headers.get("allow")], [405, "GET, HEAD"]);
    await pricing.body?.cancel();
    // The wrong method counts toward the hourly limit like any keyed request did.
    const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
    assertEquals(me.usageToday.requests, 5);
  } finally {
    await h.close();
  }
});

Deno.test("HEAD answers what GET would, Content-Length included, without the body", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    for (const [path, headers] of [["/v1/pricing", {}], ["/v1/me", bearer(apiKey)]] as const) {
      const get = await h.request(path, { headers });
      const body = new Uint8Array(await get.arrayBuffer());
      const head = await h.request(path, { method: "HEAD", headers });
      assertEquals(head.status, get.status, path);
      assertEquals(head.headers.get("content-type"), get.headers.get("content-type"));
      assertEquals(head.headers.get("content-length"), String(body.byteLength), path);
      assertEquals((await head.arrayBuffer()).byteLength, 0, path);
    }
  } finally {
    await h.close();
  }
});
