/**
 * The RPC budget seen from the HTTP API, on the embedded chain: a request the budget can't serve
 * answers 503 rpc_busy with a Retry-After that works, never 500; the RPC never sees more than the
 * budget; a 429 from the RPC holds every call back for its Retry-After and is logged once, not
 * per call.
 */
import bs58 from "bs58";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";

interface Seen {
  at: number;
  method: string;
  status: number;
  retryAfter: string | null;
}

/** A counting proxy between the service and the chain: each attempt that reaches the RPC. */
function countingProxy() {
  const seen: Seen[] = [];
  const rpcFetch: typeof fetch = async (input, init) => {
    const msg = JSON.parse(String(init?.body));
    const methods: string[] = (Array.isArray(msg) ? msg : [msg]).map((m) => m.method);
    const res = await fetch(input, init);
    const at = Date.now();
    for (const method of methods) {
      seen.push({ at, method, status: res.status, retryAfter: res.headers.get("retry-after") });
    }
    return res;
  };
  return { seen, rpcFetch };
}

/** The most calls (of one method, if given) in any window of `ms` ending at a call. */
function busiestWindow(seen: Seen[], ms: number, method?: string): number {
  const times = seen.filter((s) => !method || s.method === method).map((s) => s.at).sort();
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j] <= times[i] - ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const randomSignature = () => bs58.encode(crypto.getRandomValues(new Uint8Array(64)));

Deno.test("rpc budget: builds past the budget answer 503 rpc_busy with a Retry-After that works, never 500, and the RPC never sees more than the budget", async () => {
  const proxy = countingProxy();
  const h = await startHarness({
    rpcFetch: proxy.rpcFetch,
    env: {
      RPC_BUDGET_PER_10S: "30",
      RPC_BUDGET_PER_METHOD_PER_10S: "6",
      RPC_BUDGET_USER_WAIT_MS: "0",
    },
  });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const build = () =>
      h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(apiKey),
        json: {
          payer: wallet.publicKey.toBase58(),
          name: "Budget",
          symbol: "BDG",
          metadataUri: "https://example.com/m.json",
          supply: "1000",
        },
      });
    const answers: { status: number; retryAfter: string | null; code?: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await build();
      const body = await res.json();
      answers.push({
        status: res.status,
        retryAfter: res.headers.get("retry-after"),
        ...body.error,
      });
    }
    const statuses = answers.map((a) => a.status);
    assert(statuses.every((s) => s === 201 || s === 503), JSON.stringify(answers));
    const busy = answers.filter((a) => a.status === 503);
    assert(busy.length > 0, `no build was refused: ${statuses}`);
    for (const b of busy) {
      assertEquals(b.code, "rpc_busy");
      assert(/^\d+$/.test(b.retryAfter ?? "") && Number(b.retryAfter) >= 1, `${b.retryAfter}`);
      assert(Number(b.retryAfter) <= 11, `Retry-After ${b.retryAfter} is past the 10 s window`);
    }
    assertEquals(h.logs.filter((l) => l.includes("unhandled error")), []);
    assert(busiestWindow(proxy.seen, 10_000) <= 30, "more than 30 RPC requests in 10 s");
    for (const m of new Set(proxy.seen.map((s) => s.method))) {
      assert(busiestWindow(proxy.seen, 10_000, m) <= 6, `more than 6 ${m} in 10 s`);
    }

    // Waiting as long as Retry-After says is enough (nothing else is using the budget).
    await new Promise((r) => setTimeout(r, Number(busy.at(-1)!.retryAfter) * 1000));
    const again = await build();
    assertEquals(again.status, 201, JSON.stringify(await again.json()));
  } finally {
    await h.close();
  }
});

Deno.test("rpc budget: a 429 from the RPC holds every call back for its Retry-After, the caller gets 503 rpc_busy, and the storm is logged once", async () => {
  const proxy = countingProxy();
  const h = await startHarness({
    rpcFetch: proxy.rpcFetch,
    chain: { rpcLimits: "public" },
    // Our own budget off, so the chain's limit is what stops us.
    env: { RPC_BUDGET_PER_10S: "unlimited", RPC_BUDGET_PER_METHOD_PER_10S: "unlimited" },
  });
  try {
    const { apiKey } = await h.newApiKey();
    const statuses: number[] = [];
    const retryAfters: string[] = [];
    // Each verify of an unknown signature is one getTransaction: the 41st in 10 s meets a 429.
    for (let i = 0; i < 48; i++) {
      const res = await h.request(`/v1/transactions/${randomSignature()}`, {
        headers: bearer(apiKey),
      });
      const body = await res.json();
      statuses.push(res.status);
      if (res.status === 503) {
        assertEquals(body.error.code, "rpc_busy");
        retryAfters.push(res.headers.get("retry-after") ?? "");
      }
    }
    assert(statuses.every((s) => s === 404 || s === 503), `${statuses}`);
    assert(statuses.includes(503), `never refused: ${statuses}`);
    assert(retryAfters.every((r) => /^\d+$/.test(r) && Number(r) >= 1), `${retryAfters}`);

    const first429 = proxy.seen.find((s) => s.status === 429);
    assert(first429, "the chain never answered 429");
    const pause = Number(first429.retryAfter) * 1000;
    assert(pause >= 1000, `Retry-After ${first429.retryAfter}`);
    const early = proxy.seen.filter((s) => s.at > first429.at && s.at < first429.at + pause);
    assertEquals(early, [], "calls went to the RPC before its Retry-After had passed");

    const warned = h.logs.filter((l) => l.includes("RPC is throttling or unhealthy"));
    assertEquals(warned.length, 1, `${warned.length} throttle warnings`);
    assertEquals(JSON.parse(warned[0]).byKind["429"], 1);
    assertEquals(h.logs.filter((l) => l.includes("unhandled error")), []);
  } finally {
    await h.close();
  }
});
