import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";
import { Health } from "../../src/openapi/integrator.ts";
import * as S from "../../src/openapi/schemas.ts";

/** Counts getSlot calls that reach the RPC. */
function countingFetch() {
  const counter = { getSlot: 0 };
  const f: typeof fetch = (input, init) => {
    if (typeof init?.body === "string" && init.body.includes('"getSlot"')) counter.getSlot++;
    return fetch(input, init);
  };
  return { counter, f };
}

Deno.test("GET /v1/health: no key needed; ready while KV and the RPC answer; the RPC probe is reused for 5 s", async () => {
  let now = Date.UTC(2030, 0, 1);
  const { counter, f } = countingFetch();
  const h = await startHarness({ clock: () => now, rpcFetch: f });
  try {
    const res = await h.request("/v1/health");
    assertEquals(res.status, 200);
    const body = Health.strict().parse(await res.json());
    assertEquals(body.status, "ready");
    assert(body.checks.kv.ok && body.checks.rpc.ok);
    assert(typeof body.checks.rpc.slot === "number");
    assertEquals(counter.getSlot, 1);

    // A balancer polling every second within the window costs no further RPC call.
    for (let i = 0; i < 4; i++) {
      now += 1_000;
      assertEquals((await h.request("/v1/health")).status, 200);
    }
    assertEquals(counter.getSlot, 1);
    now += 1_001;
    assertEquals((await h.request("/v1/health")).status, 200);
    assertEquals(counter.getSlot, 2);
  } finally {
    await h.close();
  }
});

Deno.test("GET /v1/health: 503 not_ready naming the RPC when the RPC is down, ready again when it is back", async () => {
  let now = Date.UTC(2030, 0, 1);
  let down = false;
  const h = await startHarness({
    clock: () => now,
    rpcFetch: (input, init) =>
      down ? Promise.reject(new TypeError("connection refused")) : fetch(input, init),
  });
  try {
    assertEquals((await h.request("/v1/health")).status, 200);
    down = true;
    now += 6_000;
    const res = await h.request("/v1/health");
    assertEquals(res.status, 503);
    assertEquals(res.headers.get("retry-after"), "5");
    const body = S.ErrorBody.parse(await res.json());
    assertEquals(body.error.code, "not_ready");
    assertEquals(Object.keys(body.error.fields), ["rpc"]);
    down = false;
    now += 6_000;
    assertEquals((await h.request("/v1/health")).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("GET /v1/health: 503 not_ready naming KV when KV cannot be read", async () => {
  const h = await startHarness();
  // KV refusing reads, without closing the database under the running service (closing it while
  // queue listeners and the watcher still hold it can crash the runtime on a busy machine).
  const get = h.kv.get;
  h.kv.get = () => Promise.reject(new TypeError("Failed to read from KV: database is closed"));
  try {
    const res = await h.request("/v1/health");
    assertEquals(res.status, 503);
    const body = S.ErrorBody.parse(await res.json());
    assertEquals(body.error.code, "not_ready");
    assert(typeof body.error.fields.kv === "string");
    assertEquals(body.error.fields.rpc, undefined);
  } finally {
    h.kv.get = get;
    await h.close();
  }
});
