/**
 * Errors stay bounded whatever the request: an invalid_request lists at most MAX_LISTED_FIELDS
 * fields and counts the rest; an idempotency record of any size is stored, so no 4xx becomes a
 * 500; a 413 closes the connection.
 */
import { Hono } from "hono";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { ApiError, MAX_LISTED_FIELDS } from "../../src/kernel/errors.ts";
import { idempotent } from "../../src/http/idempotency.ts";
import { loadBody, storeBody } from "../../src/idempotency/record.ts";
import type { AppEnv } from "../../src/http/env.ts";

const manyUnknown = (n: number, base: Record<string, unknown> = {}) => {
  const body: Record<string, unknown> = { ...base };
  for (let i = 0; i < n; i++) body[`m${i}`] = i;
  return body;
};

Deno.test("3,200 unknown members with an Idempotency-Key: a bounded 400, stored and replayed on every POST", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    for (const path of ["/v1/tokens", "/v1/metadata", "/v1/transactions"]) {
      const json = manyUnknown(3200);
      const send = () =>
        h.request(path, {
          method: "POST",
          headers: { ...bearer(apiKey), "idempotency-key": `big-${path}` },
          json,
        });
      const first = await send();
      const text = await first.text();
      assertEquals(first.status, 400, `${path}: ${text.slice(0, 300)}`);
      assert(text.length < 8_000, `${path}: the answer is ${text.length} bytes`);
      const body = JSON.parse(text);
      assertEquals(body.error.code, "invalid_request");
      const listed = Object.keys(body.error.fields).length;
      assertEquals(listed, MAX_LISTED_FIELDS, path);
      assert(
        body.error.fieldsOmitted >= 3200 - MAX_LISTED_FIELDS,
        `${path}: ${text.slice(0, 200)}`,
      );
      assert(/more fields are invalid/.test(body.error.message), body.error.message);

      // The record was stored: the retry replays the same 400, neither 409 nor 500.
      const again = await send();
      assertEquals(again.status, 400, path);
      assertEquals(again.headers.get("idempotent-replayed"), "true", path);
      assertEquals(await again.json(), body, path);
    }
    assert(!h.logs.some((l) => l.includes("Value too large")), "no KV size fault was logged");
  } finally {
    await h.close();
  }
});

Deno.test("a field name of 60 KB is clipped in the answer", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const res = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: { ["n".repeat(60_000)]: 1 },
    });
    const text = await res.text();
    assertEquals(res.status, 400);
    assert(text.length < 2_000, `the answer is ${text.length} bytes`);
    const names = Object.keys(JSON.parse(text).error.fields);
    assert(names.some((n) => n.startsWith("nnnn") && n.endsWith("\u2026")), names.join(","));
  } finally {
    await h.close();
  }
});

Deno.test("ApiError keeps few fields and clips long messages", () => {
  const fields: Record<string, string> = {};
  for (let i = 0; i < 50; i++) fields[`f${i}`] = "x".repeat(10_000);
  const e = new ApiError("invalid_request", "Request is invalid", fields);
  const body = e.body();
  assertEquals(Object.keys(body.error.fields).length, MAX_LISTED_FIELDS);
  assertEquals(body.error.fieldsOmitted, 50 - MAX_LISTED_FIELDS);
  assert(JSON.stringify(body).length < 8_000);
  // Few fields: no count, the message unchanged.
  assertEquals(new ApiError("invalid_request", "Bad", { a: "b" }).body(), {
    error: { code: "invalid_request", message: "Bad", fields: { a: "b" } },
  });
});

Deno.test("an idempotency record larger than a KV value is stored in chunks and replayed whole", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // A 400 of 300 KB: far beyond one KV value (64 KiB) and one atomic commit's 800 KiB is not
    // needed for it, but more than one chunk batch is.
    const huge = {
      error: { code: "invalid_request", message: "m", fields: { big: "é".repeat(150_000) } },
    };
    let runs = 0;
    const app = new Hono<AppEnv>();
    app.use("*", async (c, next) => {
      c.set("key", { keyId: "k1" } as never);
      await next();
    });
    app.use("*", idempotent({ kv, clock: Date.now }));
    app.post("/x", (c) => {
      runs++;
      return c.json(huge, 400);
    });
    const send = () =>
      app.request("/x", { method: "POST", headers: { "idempotency-key": "k" }, body: "{}" });
    const first = await send();
    assertEquals(first.status, 400);
    await first.body?.cancel();
    const again = await send();
    assertEquals(again.status, 400);
    assertEquals(again.headers.get("idempotent-replayed"), "true");
    assertEquals(await again.json(), huge);
    assertEquals(runs, 1);

    // Round trip of the chunking itself, with a two-byte-per-unit string.
    const key: Deno.KvKey = ["idem", "k2", "/y", "z"];
    const { stored, chunks } = storeBody(key, huge, 60_000);
    assert(chunks.length > 5, `${chunks.length} chunks`);
    for (const c of chunks) await kv.set(c.key, c.value);
    assertEquals(await loadBody(kv, key, stored), huge);
    const small = storeBody(key, { ok: 1 }, 60_000);
    assertEquals(small.chunks.length, 0);
    assertEquals(await loadBody(kv, key, small.stored), { ok: 1 });
  } finally {
    kv.close();
  }
});

Deno.test("a 413 tells the client the connection closes, on the served app", async () => {
  // Deno.serve 2.9 writes the answer but leaves the socket to the peer (denoland/deno#36821):
  // what the service controls, and this checks, is the `Connection: close` it answers with.
  const h = await startHarness();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, h.app.fetch);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  try {
    const head = [
      "POST /v1/tokens HTTP/1.1",
      "Host: 127.0.0.1",
      "Content-Type: application/json",
      "Content-Length: 10000000",
      "",
      "",
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(head + "{".repeat(1000)));
    const buf = new Uint8Array(65536);
    let text = "";
    // Until the whole answer is in (or the server closes): never a fixed wait.
    while (!text.includes("}}}")) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    assert(text.startsWith("HTTP/1.1 413"), text.slice(0, 200));
    assert(/\r\nconnection: close\r\n/i.test(text), text.slice(0, 400));
    assert(text.includes('"payload_too_large"'), text);

    // The header is the service's own, not only the runtime's (which adds one for an unread body).
    for (const path of ["/v1/tokens", "/v1/metadata", "/portal/api/challenge"]) {
      const res = await h.request(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "x".repeat(3 * 1024 * 1024),
      });
      assertEquals(res.status, 413, path);
      assertEquals(res.headers.get("connection"), "close", path);
      await res.body?.cancel();
    }
  } finally {
    conn.close();
    await server.shutdown();
    await h.close();
  }
});
