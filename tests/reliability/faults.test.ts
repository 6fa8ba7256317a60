/**
 * Faults at the edges: the RPC slow, failing 30% of calls, or down; and a process that dies in
 * the middle of a build or an upload (a KV call that throws at step N, before or just after its
 * commit lands). The service must answer in bounded time with 2xx or the seed's error shape,
 * never record half of anything, and the watcher must finish every open build once the RPC is
 * back.
 */
import { projectionKey } from "../../events/keys.ts";
import { sha256Hex } from "../../src/kernel/hashing.ts";
import type { BuildDoc, OpenBuildDoc } from "../../projections/builds.ts";
import type { HostedImageDoc } from "../../projections/hosted.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { startWatcher, sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { QueueDispatcher } from "../../src/queue.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { allEvents, assertErrorShape, holdNextCommit } from "./support.ts";

const LIMITS = { TOKENS_PER_DAY: "1000", METADATA_PER_DAY: "1000", REQUESTS_PER_HOUR: "100000" };

type Key = Awaited<ReturnType<Harness["newApiKey"]>>;

const buildJson = (k: Key, i: number) => ({
  payer: k.wallet.publicKey.toBase58(),
  name: `Fault ${i}`,
  symbol: "FLT",
  metadataUri: "https://example.com/m/fault.json",
  supply: "1000",
});

async function call(h: Harness, path: string, init: RequestInit & { json?: unknown }) {
  const t = performance.now();
  const res = await h.request(path, init);
  const body = await res.json();
  return { status: res.status, body, ms: performance.now() - t, res };
}

async function replayEqual(h: Harness) {
  const report = await replayAndCompare(h.kv, allProjections);
  assert(report.equal, JSON.stringify({ chain: report.chain.problems, m: report.mismatches }));
}

const count = async (h: Harness, type: string) =>
  (await allEvents(h.kv)).filter((e) => e.type === type).length;

async function signed(h: Harness, k: Key, i: number) {
  const r = await call(h, "/v1/tokens", {
    method: "POST",
    headers: bearer(k.apiKey),
    json: buildJson(k, i),
  });
  assertEquals(r.status, 201, JSON.stringify(r.body));
  const tx = decodeTx(r.body.transaction);
  tx.sign([k.wallet]);
  return {
    mint: r.body.mint as string,
    tx: tx.serialize(),
    b64: btoa(String.fromCharCode(...tx.serialize())),
  };
}

Deno.test("RPC failing 30% of calls: 201/202 or a 5xx in the seed's shape, retries with the same Idempotency-Key finish, nothing recorded twice or half", async () => {
  // Under the service's own retrying fetch: counts the node's refusals the service met.
  let refusals = 0;
  const rpcFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 503) refusals++;
    return res;
  };
  const h = await startHarness({ env: LIMITS, rpcFetch });
  try {
    const k = await h.newApiKey();
    const toRelay = [];
    for (let i = 0; i < 6; i++) toRelay.push(await signed(h, k, 100 + i));
    const builtBefore = await count(h, "TokenBuilt");
    h.chain.setFaults({ failureRate: 0.3 });

    const statuses: Record<number, number> = {};
    // The signed transactions go first: their blockhash lives about 60 s of wall-clock slots,
    // and the builds below may take that long on a loaded machine.
    const sigs = new Set<string>();
    for (const t of toRelay) {
      const idem = crypto.randomUUID();
      for (let attempt = 0;; attempt++) {
        assert(attempt < 25, "a relay never got through a 30% failure rate");
        const r = await call(h, "/v1/transactions", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json: { transaction: t.b64 },
        });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 202) {
          sigs.add(r.body.signature);
          break;
        }
        assert(
          [500, 503].includes(r.status),
          `relay answered ${r.status} ${JSON.stringify(r.body)}`,
        );
        assertErrorShape(r.body, "relay under failures");
      }
    }
    assertEquals(sigs.size, toRelay.length);
    assertEquals(
      await count(h, "TransactionSubmitted"),
      toRelay.length,
      "one submission per relay",
    );
    const mints = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const idem = crypto.randomUUID();
      for (let attempt = 0;; attempt++) {
        assert(attempt < 25, "a build never got through a 30% failure rate");
        const r = await call(h, "/v1/tokens", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json: buildJson(k, i),
        });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        assert(r.ms < 10_000, `a build took ${r.ms} ms`);
        if (r.status === 201) {
          mints.add(r.body.mint);
          break;
        }
        assert(
          [500, 503].includes(r.status),
          `build answered ${r.status} ${JSON.stringify(r.body)}`,
        );
        assertErrorShape(r.body, "build under failures");
      }
    }
    assertEquals(mints.size, 12);
    assertEquals(
      await count(h, "TokenBuilt"),
      builtBefore + 12,
      "one TokenBuilt per successful build",
    );

    // The service retries failed reads (RPC_RETRIES), so most builds get through at once; a relay
    // whose sendTransaction is refused is a 5xx the client retries. Printed to keep it visible.
    console.log(
      `30% RPC failures: ${refusals} refusals met, answers ${JSON.stringify(statuses)}`,
    );
    assert(refusals > 10, `the failure rate never showed (${refusals} refusals)`);
    assert(statuses[201] === 12, "every build answered 201 exactly once");
    h.chain.setFaults({ failureRate: 0 });
    await replayEqual(h);
  } finally {
    await h.close();
  }
});

Deno.test("RPC slow: 700 ms per call still builds, relays and verifies", async () => {
  const h = await startHarness({ env: LIMITS });
  try {
    const k = await h.newApiKey();
    const t = await signed(h, k, 1);
    h.chain.setFaults({ latencyMs: 700 });
    const b = await call(h, "/v1/tokens", {
      method: "POST",
      headers: bearer(k.apiKey),
      json: buildJson(k, 2),
    });
    assertEquals(b.status, 201, JSON.stringify(b.body));
    // One round trip (the rent was read by the first build; tests/tokens/command.test.ts counts).
    assert(b.ms >= 700 && b.ms < 5_000, `build took ${b.ms} ms at 700 ms per round trip`);
    const r = await call(h, "/v1/transactions", {
      method: "POST",
      headers: bearer(k.apiKey),
      json: { transaction: t.b64 },
    });
    assertEquals(r.status, 202, JSON.stringify(r.body));
    assert(r.ms < 5_000, `relay took ${r.ms} ms`);
    h.chain.setFaults({ latencyMs: 0 });
    await h.waitForConfirmation(r.body.signature);
    h.chain.setFaults({ latencyMs: 700 });
    const v = await call(h, `/v1/transactions/${r.body.signature}`, { headers: bearer(k.apiKey) });
    assertEquals([v.status, v.body.status], [200, "confirmed"]);
    // Final now: served from the projection, so even an RPC a minute slow no longer matters
    // (a generous bound, far under one round trip).
    h.chain.setFaults({ latencyMs: 60_000 });
    const again = await call(h, `/v1/transactions/${r.body.signature}`, {
      headers: bearer(k.apiKey),
    });
    assertEquals(again.body.status, "confirmed");
    assert(again.ms < 30_000, `a final verify took ${again.ms} ms with a slow RPC`);
  } finally {
    h.chain.setFaults({ latencyMs: 0 });
    await h.close();
  }
});

Deno.test({
  // Without a bound on RPC calls a node that accepts the connection and never answers would hold
  // the request forever; RPC_TIMEOUT_MS caps each call, retries included.
  name: "RPC stalled (accepts, never answers): a build answers 5xx within 15 s",
  async fn() {
    const h = await startHarness({ env: { ...LIMITS, RPC_TIMEOUT_MS: "3000" } });
    try {
      const k = await h.newApiKey();
      h.chain.setFaults({ latencyMs: 120_000 });
      const b = await call(h, "/v1/tokens", {
        method: "POST",
        headers: bearer(k.apiKey),
        json: buildJson(k, 1),
      });
      assert(b.status >= 500 && b.ms < 15_000, `${b.status} after ${b.ms} ms`);
      assertErrorShape(b.body, "stalled RPC");
    } finally {
      h.chain.setFaults({ latencyMs: 0 });
      await h.close();
    }
  },
});

Deno.test("RPC down: keyed calls that need it answer 5xx at once, the rest still work; back up, the watcher finishes every open build", async () => {
  const h = await startHarness({ env: LIMITS, chain: { slotMs: "manual" } });
  try {
    const k = await h.newApiKey();
    // Three submitted through the caller's own RPC, one relayed, one never signed.
    const own = [await signed(h, k, 1), await signed(h, k, 2), await signed(h, k, 3)];
    const relayed = await signed(h, k, 4);
    const unsigned = await call(h, "/v1/tokens", {
      method: "POST",
      headers: bearer(k.apiKey),
      json: buildJson(k, 5),
    });
    assertEquals(unsigned.status, 201);
    const r = await call(h, "/v1/transactions", {
      method: "POST",
      headers: bearer(k.apiKey),
      json: { transaction: relayed.b64 },
    });
    assertEquals(r.status, 202);
    const ownSigs = [];
    for (const t of own) ownSigs.push(await h.services.connection.sendRawTransaction(t.tx));
    for (const s of [...ownSigs, r.body.signature]) await h.waitForConfirmation(s);

    h.chain.setFaults({ down: true });
    const b = await call(h, "/v1/tokens", {
      method: "POST",
      headers: bearer(k.apiKey),
      json: buildJson(k, 6),
    });
    assert(
      b.status >= 500 && b.ms < 5_000,
      `build with the RPC down: ${b.status} after ${b.ms} ms`,
    );
    assertErrorShape(b.body, "build, RPC down");
    const v = await call(h, `/v1/transactions/${ownSigs[0]}`, { headers: bearer(k.apiKey) });
    assert(v.status >= 500 && v.ms < 5_000, `verify with the RPC down: ${v.status}`);
    assertErrorShape(v.body, "verify, RPC down");
    const me = await call(h, "/v1/me", { headers: bearer(k.apiKey) });
    assertEquals(me.status, 200);
    const meta = await call(h, "/v1/metadata", {
      method: "POST",
      headers: bearer(k.apiKey),
      json: { name: "Down", symbol: "DWN", imageBase64: toBase64(makePng(3, 3)) },
    });
    assertEquals(meta.status, 201, "metadata needs no RPC");

    // The watcher keeps going without the RPC and records nothing.
    const before = (await allEvents(h.kv)).length;
    await sweepOpenBuilds(h.services).catch(() => {});
    assertEquals((await allEvents(h.kv)).length, before);

    h.chain.setFaults({ down: false });
    await sweepOpenBuilds(h.services);
    const status = async (mint: string) => {
      const id = (await h.kv.get<number>(projectionKey("build_by_mint", [mint]))).value!;
      return (await h.kv.get<BuildDoc>(projectionKey("build", [id]))).value!.status;
    };
    for (const t of [...own, relayed]) assertEquals(await status(t.mint), "confirmed", t.mint);
    assertEquals(await status(unsigned.body.mint), "built");
    // Past its last valid block height the unsigned one expires.
    h.chain.advanceSlots(200);
    await sweepOpenBuilds(h.services);
    assertEquals(await status(unsigned.body.mint), "expired");
    const open = [];
    for await (const e of h.kv.list<OpenBuildDoc>({ prefix: projectionKey("open_build", []) })) {
      open.push(e);
    }
    assertEquals(open.length, 0, "builds left open");
    await replayEqual(h);
  } finally {
    h.chain.setFaults({ down: false });
    await h.close();
  }
});

/** Wall time that a test can move forward (past an idempotency lease, say). */
function jumpClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, jump: (ms: number) => (offset += ms) };
}

/**
 * A retry after a crash: the dead request's in-flight marker holds its lease (LEASE_MS) until it
 * runs out, so a 409 until then is the designed answer; past it the retry must go through.
 */
async function retryPastLease(
  h: Harness,
  clock: ReturnType<typeof jumpClock>,
  path: string,
  init: RequestInit & { json?: unknown },
) {
  let r = await call(h, path, init);
  if (r.status === 409 && r.body.error?.code === "idempotency_key_in_flight") {
    clock.jump(61_000);
    r = await call(h, path, init);
  }
  return r;
}

/**
 * Makes the KV fail like a process dying at its N-th call from now: "before" aborts that call
 * (a commit that never lands), "after" lets a commit land and then fails (death right after it).
 */
function faultyKv(kv: Deno.Kv) {
  let countdown = Infinity;
  let mode: "before" | "after" = "before";
  let firedAt: string | null = null;
  const fail = (what: string) => {
    firedAt = what;
    countdown = Infinity;
    return new Error(`injected KV failure at ${what}`);
  };
  const tick = (what: string) => {
    if (--countdown === 0) throw fail(what);
  };
  const orig = {
    get: kv.get.bind(kv),
    getMany: kv.getMany.bind(kv),
    list: kv.list.bind(kv),
    set: kv.set.bind(kv),
    delete: kv.delete.bind(kv),
    atomic: kv.atomic.bind(kv),
  };
  const k = kv as unknown as Record<string, unknown>;
  k.get = (...a: Parameters<Deno.Kv["get"]>) => (tick("get"), orig.get(...a));
  k.getMany = (...a: Parameters<Deno.Kv["getMany"]>) => (tick("getMany"), orig.getMany(...a));
  k.list = (...a: Parameters<Deno.Kv["list"]>) => (tick("list"), orig.list(...a));
  k.set = (...a: Parameters<Deno.Kv["set"]>) => (tick("set"), orig.set(...a));
  k.delete = (...a: Parameters<Deno.Kv["delete"]>) => (tick("delete"), orig.delete(...a));
  k.atomic = () => {
    const op = orig.atomic();
    const commit = op.commit.bind(op);
    op.commit = async () => {
      if (mode === "before") {
        tick("commit");
        return await commit();
      }
      const res = await commit();
      if (--countdown === 0) throw fail("after commit");
      return res;
    };
    return op;
  };
  return {
    arm(n: number, m: "before" | "after") {
      countdown = n;
      mode = m;
      firedAt = null;
    },
    disarm() {
      countdown = Infinity;
    },
    get firedAt() {
      return firedAt;
    },
  };
}

Deno.test("a process dying at any KV step of a build leaves no partial state; the idempotent retry builds exactly once", async () => {
  const clock = jumpClock();
  // No lease renewals: their KV commits would take the injected failure meant for the request.
  const h = await startHarness({
    env: LIMITS,
    clock: clock.now,
    config: { idempotencyLeaseRenewalForTests: false },
  });
  try {
    const k = await h.newApiKey();
    const kv = faultyKv(h.kv);
    let steps = 0;
    for (const mode of ["before", "after"] as const) {
      for (let n = 1; n < 60; n++) {
        const idem = crypto.randomUUID();
        const built = await count(h, "TokenBuilt");
        kv.arm(n, mode);
        const r = await call(h, "/v1/tokens", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json: buildJson(k, n),
        });
        kv.disarm();
        if (!kv.firedAt) {
          assertEquals(r.status, 201);
          break; // past the last KV step of a build
        }
        steps++;
        assertEquals(r.status, 500, `${mode} ${kv.firedAt} #${n}: ${JSON.stringify(r.body)}`);
        assertErrorShape(r.body, `${mode} step ${n}`);
        const afterCrash = await count(h, "TokenBuilt");
        // Only a death after the event's own commit may leave its event behind, and then the
        // idempotency record committed with it makes the retry a replay.
        assert(
          afterCrash - built <= (mode === "after" ? 1 : 0),
          `${mode} #${n}: TokenBuilt without a 201`,
        );
        const retry = await retryPastLease(h, clock, "/v1/tokens", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json: buildJson(k, n),
        });
        assertEquals(retry.status, 201, `${mode} #${n} retry: ${JSON.stringify(retry.body)}`);
        assertEquals(await count(h, "TokenBuilt"), built + 1, `${mode} #${n}: built once`);
        const id =
          (await h.kv.get<number>(projectionKey("build_by_mint", [retry.body.mint]))).value;
        assert(id !== null, "the build the retry answered with is recorded");
      }
    }
    assert(steps > 10, `only ${steps} KV steps were interrupted`);
    await replayEqual(h);
  } finally {
    await h.close();
  }
});

Deno.test("a process dying at any KV step of a relay, even after the send, leaves no partial state; the retry answers 202 and records one submission", async () => {
  const clock = jumpClock();
  // No lease renewals: their KV commits would take the injected failure meant for the request.
  const h = await startHarness({
    env: LIMITS,
    clock: clock.now,
    config: { idempotencyLeaseRenewalForTests: false },
  });
  try {
    const k = await h.newApiKey();
    const kv = faultyKv(h.kv);
    let steps = 0;
    let i = 100;
    for (const mode of ["before", "after"] as const) {
      for (let n = 1; n < 40; n++) {
        const t = await signed(h, k, i++);
        const relay = { transaction: t.b64 };
        const idem = crypto.randomUUID();
        kv.arm(n, mode);
        const r = await call(h, "/v1/transactions", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json: relay,
        });
        kv.disarm();
        if (!kv.firedAt) {
          assertEquals(r.status, 202);
          break; // past the last KV step of a relay
        }
        steps++;
        assertEquals(r.status, 500, `${mode} ${kv.firedAt} #${n}: ${JSON.stringify(r.body)}`);
        assertErrorShape(r.body, `${mode} step ${n}`);
        // The client retries as told. The transaction may have been sent (and landed) already;
        // the retry must still be accepted and recorded once, not refused as already processed.
        const retry = await retryPastLease(h, clock, "/v1/transactions", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json: relay,
        });
        assertEquals(retry.status, 202, `${mode} #${n} retry: ${JSON.stringify(retry.body)}`);
        const submitted = (await allEvents(h.kv)).filter((e) =>
          e.type === "TransactionSubmitted" && e.data.signature === retry.body.signature
        );
        assertEquals(submitted.length, 1, `${mode} #${n}: one submission`);
      }
    }
    assert(steps >= 4, `only ${steps} KV steps were interrupted`);
    await replayEqual(h);
  } finally {
    await h.close();
  }
});

for (const mode of ["before", "after"] as const) {
  Deno.test({
    // "after": the event's commit lands, then the call throws (a lost commit reply). The record
    // committed with the event must survive the middleware's release, so the retry replays it.
    name:
      `a process dying at any KV step of a 700 KiB upload (${mode} the step) leaves no partial image; the retry hosts it whole, once`,
    fn: () => uploadCrash(mode),
  });
}

async function uploadCrash(mode: "before" | "after") {
  const clock = jumpClock();
  // No lease renewals: their KV commits would take the injected failure meant for the request.
  const h = await startHarness({
    env: LIMITS,
    clock: clock.now,
    config: { idempotencyLeaseRenewalForTests: false },
  });
  try {
    const k = await h.newApiKey();
    const kv = faultyKv(h.kv);
    let steps = 0;
    let width = 8;
    {
      for (let n = 1; n < 60; n++) {
        // A new image each time (so every attempt writes chunks), in two chunk commits.
        const png = makePng(width++, 8, 700 * 1024);
        const imageId = await sha256Hex(png);
        const json = { name: `Crash ${n}`, symbol: "CRSH", imageBase64: toBase64(png) };
        const idem = crypto.randomUUID();
        const hosted = await count(h, "MetadataHosted");
        kv.arm(n, mode);
        const r = await call(h, "/v1/metadata", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json,
        });
        kv.disarm();
        if (!kv.firedAt) {
          assertEquals(r.status, 201);
          break;
        }
        steps++;
        const fired = kv.firedAt;
        assertEquals(r.status, 500, `${mode} ${fired} #${n}: ${JSON.stringify(r.body)}`);
        assertErrorShape(r.body, `${mode} step ${n}`);
        const landed = (await count(h, "MetadataHosted")) - hosted;
        assert(landed <= (mode === "after" ? 1 : 0), `${mode} #${n}: MetadataHosted without a 201`);
        if (landed === 0) {
          // Chunks may be there, but without the event there is no manifest and nothing served.
          assertEquals((await h.kv.get(projectionKey("image", [imageId]))).value, null);
          const img = await h.request(`/i/${imageId}.png`);
          await img.body?.cancel();
          assertEquals(img.status, 404, `${mode} #${n}: a partial image is served`);
        }
        const retry = await retryPastLease(h, clock, "/v1/metadata", {
          method: "POST",
          headers: { ...bearer(k.apiKey), "idempotency-key": idem },
          json,
        });
        assertEquals(retry.status, 201, `${mode} #${n} retry: ${JSON.stringify(retry.body)}`);
        assertEquals(
          await count(h, "MetadataHosted"),
          hosted + 1,
          `${mode} ${fired} #${n}: hosted twice (${landed} before the retry)`,
        );
        const served = await h.request(new URL(retry.body.imageUri).pathname);
        assertEquals(served.status, 200);
        assertEquals(await sha256Hex(new Uint8Array(await served.arrayBuffer())), imageId);
      }
    }
    assert(steps > 5, `only ${steps} KV steps were interrupted`);
    // Every manifest points at a whole image.
    for await (const e of h.kv.list<HostedImageDoc>({ prefix: projectionKey("image", []) })) {
      const res = await h.request(`/i/${e.value.imageId}.${e.value.ext}`);
      assertEquals(res.status, 200);
      assertEquals(await sha256Hex(new Uint8Array(await res.arrayBuffer())), e.value.imageId);
    }
    await replayEqual(h);
  } finally {
    await h.close();
  }
}

Deno.test("an RPC outage leaves the watcher with one sweep loop, not one more per failed sweep", async () => {
  // A sweep with an open build lists the treasury's new transactions once.
  let heightCalls = 0;
  const counting: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string" && init.body.includes('"getSignaturesForAddress"')) {
      heightCalls++;
    }
    return await fetch(input, init);
  };
  const h = await startHarness({ env: LIMITS, rpcFetch: counting });
  const queue = new QueueDispatcher(h.kv, () => {});
  const SWEEP_MS = 25;
  try {
    await signed(h, await h.newApiKey(), 1);
    await startWatcher(h.services, queue, { sweepMs: SWEEP_MS });
    // Every sweep fails while the RPC is down; a failed sweep must still schedule exactly one next.
    h.chain.setFaults({ down: true });
    await sleep(2_500);
    h.chain.setFaults({ down: false });
    await sleep(1_500);
    heightCalls = 0;
    await sleep(1_000);
    // One loop asks once per sweep and waits SWEEP_MS between sweeps: at most 40 times a second.
    // A loop per failed sweep gave 120 here after this outage, and more the longer it lasts.
    assert(heightCalls <= 1_000 / SWEEP_MS, `${heightCalls} treasury listings in 1 s`);
    assert(heightCalls > 0, "the watcher sweeps again once the RPC is back");
  } finally {
    await h.kv.set(["watcher", "generation"], "stopped");
    await queue.stop();
    await h.close();
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a landing the node lists but cannot serve yet is not expired by the watcher; the next sweep confirms it", async () => {
  // A node that lags: getSignaturesForAddress lists the transaction, getTransaction finds nothing.
  let lagging = false;
  const lag: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (lagging && body?.method === "getTransaction") {
      return Response.json({ jsonrpc: "2.0", id: body.id, result: null });
    }
    return await fetch(input, init);
  };
  const h = await startHarness({ env: LIMITS, rpcFetch: lag, chain: { slotMs: "manual" } });
  try {
    const k = await h.newApiKey();
    const t = await signed(h, k, 1);
    const sig = await h.services.connection.sendRawTransaction(t.tx);
    await h.waitForConfirmation(sig);
    const record = async () =>
      (await call(h, `/v1/tokens/${t.mint}`, { headers: bearer(k.apiKey) })).body;
    const { lastValidBlockHeight } = (await h.kv.get<BuildDoc>(
      projectionKey("build", [
        (await h.kv.get<number>(projectionKey("build_by_mint", [t.mint])))
          .value!,
      ]),
    )).value!;

    lagging = true;
    const height = await h.services.connection.getBlockHeight("confirmed");
    h.chain.advanceSlots(lastValidBlockHeight! - height + 5);
    await sweepOpenBuilds(h.services);
    assertEquals((await record()).status, "built", "expired although it landed");

    lagging = false;
    await sweepOpenBuilds(h.services);
    const done = await record();
    assertEquals([done.status, done.signature, done.feeVerified], ["confirmed", sig, true]);
  } finally {
    await h.close();
  }
});

Deno.test("a request whose Idempotency-Key lease ran out and was taken over by a retry writes nothing; the retry's answer stands", async () => {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  // A process too stalled to renew its lease: the clock jumps past it.
  const h = await startHarness({
    env: LIMITS,
    clock: () => now,
    config: { idempotencyLeaseRenewalForTests: false },
  });
  try {
    const k = await h.newApiKey();
    // Request A stops just before its own commit, for longer than its lease.
    const { atCommit, release, restore } = holdNextCommit(h.services.store);

    const send = () =>
      call(h, "/v1/metadata", {
        method: "POST",
        headers: { ...bearer(k.apiKey), "idempotency-key": "slow-one" },
        json: { name: "Slow", symbol: "SLW", imageBase64: toBase64(makePng(3, 3)) },
      });
    const a = send();
    await atCommit;
    now += 61_000;
    const b = await send();
    assertEquals(b.status, 201, JSON.stringify(b.body));
    release();
    const aDone = await a;
    assertEquals([aDone.status, aDone.body.error.code], [409, "idempotency_key_in_flight"]);
    restore();

    assertEquals(await count(h, "MetadataHosted"), 1);
    const replay = await send();
    assertEquals([replay.status, replay.body], [201, b.body]);
    assertEquals(replay.res.headers.get("idempotent-replayed"), "true");
    await replayEqual(h);
  } finally {
    await h.close();
  }
});
