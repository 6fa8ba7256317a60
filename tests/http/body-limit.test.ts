/**
 * bodyLimit and readJson on a bare app: one read of the body shared by every consumer, a body
 * past the limit refused as it streams, a large body that does not arrive in time refused, and a
 * body of more members and elements than any request needs refused before it is parsed.
 */
import { Hono } from "hono";
import { assert, assertEquals } from "../support/assert.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import {
  bodyBytes,
  bodyLimit,
  LARGE_BODIES_AT_ONCE,
  LARGE_BODY_READ_MS,
  UNDECLARED_BODIES_AT_ONCE,
} from "../../src/http/body-limit.ts";
import { MAX_JSON_VALUES, readJson } from "../../src/http/body.ts";

function app(limit: number) {
  const a = new Hono<AppEnv>();
  a.post("/x", bodyLimit(limit), async (c) => {
    const first = await bodyBytes(c);
    const json = await readJson(c);
    assert(first === (await bodyBytes(c)), "the same bytes every time");
    return c.json({ bytes: first.length, json });
  });
  a.onError((e, c) => {
    if (!(e instanceof ApiError)) return c.text(String(e), 500);
    for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
    return c.json(e.body(), e.status as 400);
  });
  return a;
}
const json = { "content-type": "application/json" };

Deno.test("bodyLimit: the body read once, declared or streamed; past the limit 413 while streaming", async () => {
  const a = app(1024);
  const declared = await a.request("/x", {
    method: "POST",
    headers: { ...json, "content-length": "9" },
    body: '{"a":[1]}',
  });
  assertEquals(await declared.json(), { bytes: 9, json: { a: [1] } });

  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(ctl) {
      pulled++;
      ctl.enqueue(new Uint8Array(100).fill(0x20));
    },
  });
  const over = await a.request("/x", { method: "POST", headers: json, body: endless });
  assertEquals(over.status, 413);
  assertEquals(over.headers.get("connection"), "close");
  assert(pulled <= 12, `${pulled} chunks of 100 bytes were read for a limit of 1024`);
});

Deno.test("bodyLimit: a large body that does not arrive in time is refused and its stream cancelled", async () => {
  let cancelled = false;
  const stalled = new ReadableStream<Uint8Array>({
    start(ctl) {
      ctl.enqueue(new TextEncoder().encode("{"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const t0 = performance.now();
  const res = await app(2 * 1024 * 1024).request("/x", {
    method: "POST",
    headers: { ...json, "content-length": "100000" },
    body: stalled,
  });
  assertEquals(res.status, 400);
  assertEquals((await res.json()).error.fields, {
    body: `must arrive within ${LARGE_BODY_READ_MS / 1000} s`,
  });
  assert(cancelled, "the stream was cancelled");
  assert(performance.now() - t0 >= LARGE_BODY_READ_MS - 50);
});

Deno.test("readJson: more members and elements than MAX_JSON_VALUES is refused before parsing; commas in strings do not count", async () => {
  const a = app(2 * 1024 * 1024);
  const many = JSON.stringify(Array.from({ length: MAX_JSON_VALUES + 1 }, () => 0));
  const refused = await a.request("/x", { method: "POST", headers: json, body: `{"a":${many}}` });
  assertEquals(refused.status, 400);
  assertEquals((await refused.json()).error.fields, {
    body: `at most ${MAX_JSON_VALUES} members and array elements in all`,
  });
  const text = `{"s":"${',:\\"'.repeat(MAX_JSON_VALUES)}"}`;
  const ok = await a.request("/x", { method: "POST", headers: json, body: text });
  assertEquals(ok.status, 200);
  assertEquals((await ok.json()).json.s, ',:"'.repeat(MAX_JSON_VALUES));
});

Deno.test("bodyLimit: a large body takes its place only when asked for, after the key check, so unkeyed slow senders hold none", async () => {
  const a = new Hono<AppEnv>();
  a.post("/x", bodyLimit(2 * 1024 * 1024), async (c, next) => {
    if (!c.req.header("authorization")) return c.json({ error: "no key" }, 401);
    await next();
  }, async (c) => c.json({ bytes: (await bodyBytes(c)).length }));
  const stalled = () =>
    new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(new Uint8Array(10));
      },
    });
  const mib = String(1024 * 1024);
  const unkeyed = await Promise.all(
    Array.from({ length: 5 }, () =>
      a.request("/x", {
        method: "POST",
        headers: { ...json, "content-length": mib },
        body: stalled(),
      })),
  );
  assertEquals(unkeyed.map((r) => r.status), [401, 401, 401, 401, 401]);
  const t0 = performance.now();
  const keyed = await a.request("/x", {
    method: "POST",
    headers: { ...json, "content-length": mib, authorization: "Bearer k" },
    body: new Uint8Array(1024 * 1024),
  });
  assertEquals(await keyed.json(), { bytes: 1024 * 1024 });
  assert(performance.now() - t0 < 2_000, "no place was held by the unkeyed senders");
});

Deno.test("bodyLimit: slow senders of bodies of no declared size hold none of the places a declared large body needs", async () => {
  const a = app(2 * 1024 * 1024);
  // Past 64 KiB and then stalled: each holds a place of its own kind while it is read.
  const stalled = () =>
    new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(new Uint8Array(65 * 1024).fill(0x20));
      },
    });
  const slow = Array.from(
    { length: UNDECLARED_BODIES_AT_ONCE },
    () => a.request("/x", { method: "POST", headers: json, body: stalled() }),
  );
  await new Promise((r) => setTimeout(r, 100));
  const t0 = performance.now();
  const big = JSON.stringify({ s: "A".repeat(1024 * 1024) });
  const declared = await a.request("/x", {
    method: "POST",
    headers: { ...json, "content-length": String(big.length) },
    body: big,
  });
  assertEquals(declared.status, 200);
  assertEquals((await declared.json()).bytes, big.length);
  assert(performance.now() - t0 < 2_000, "the declared body did not wait for the slow ones");
  const refused = await Promise.all(slow);
  for (const r of refused) {
    assertEquals((await r.json()).error.fields, {
      body: `must arrive within ${LARGE_BODY_READ_MS / 1000} s`,
    });
  }
});

Deno.test("bodyLimit: one key's stalled large bodies hold one place; another key's body goes through", async () => {
  const a = new Hono<AppEnv>();
  a.post("/x", bodyLimit(2 * 1024 * 1024), async (c, next) => {
    c.set("key", { keyId: c.req.header("authorization")! } as never);
    await next();
  }, async (c) => c.json({ bytes: (await bodyBytes(c)).length }));
  const mib = String(1024 * 1024);
  // As many stalled bodies of one key as there are places: they queue behind their own.
  const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  const stalled = Array.from({ length: LARGE_BODIES_AT_ONCE }, () =>
    a.request("/x", {
      method: "POST",
      headers: { ...json, "content-length": mib, authorization: "slow" },
      body: new ReadableStream<Uint8Array>({
        start(ctl) {
          ctl.enqueue(new Uint8Array(10));
          streams.push(ctl);
        },
      }),
    }));
  await new Promise((r) => setTimeout(r, 100));
  const t0 = performance.now();
  const other = await a.request("/x", {
    method: "POST",
    headers: { ...json, "content-length": mib, authorization: "other" },
    body: new Uint8Array(1024 * 1024),
  });
  assertEquals(await other.json(), { bytes: 1024 * 1024 });
  assert(performance.now() - t0 < 2_000, "the other key did not wait for the slow one");
  // The slow key's bodies end (short) and are answered, without waiting out their deadline.
  for (const ctl of streams) ctl.close();
  for (const r of await Promise.all(stalled)) await r.body?.cancel();
});
