import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { connect, rawPost, rpc, start, waitFor } from "./helpers.ts";
import type { EmbeddedChain } from "../../src/chain/mod.ts";

async function admin(chain: EmbeddedChain, path: string, body?: unknown) {
  const res = await fetch(`${chain.url}/admin/${path}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function refused(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { method: "POST", body: "{}" });
    await res.body?.cancel();
    return false;
  } catch (e) {
    return e instanceof TypeError;
  }
}

Deno.test("fault knobs: latency, failure rate, down and back up", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });

    chain.setFaults({ latencyMs: 150 });
    let t0 = performance.now();
    await conn.getSlot();
    assert(performance.now() - t0 >= 145, "latency is added before the answer");
    // Reset from a minute of latency: a generous bound still tells it is gone.
    chain.setFaults({ latencyMs: 60_000 });
    chain.setFaults({ latencyMs: 0 });
    t0 = performance.now();
    await conn.getSlot();
    assert(performance.now() - t0 < 30_000);

    chain.setFaults({ failureRate: 1 });
    const failed = await rawPost(
      chain,
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "getSlot" }),
    );
    assertEquals(failed.status, 503);
    assertEquals(failed.body, {
      jsonrpc: "2.0",
      error: { code: -32005, message: "Node is unhealthy", data: { numSlotsBehind: null } },
      id: 7,
    });
    await assertRejects(() => conn.getSlot(), Error, "503");
    // Admin routes are not subject to faults.
    assertEquals((await admin(chain, "state")).status, 200);
    chain.setFaults({ failureRate: 0 });
    assertEquals((await rpc(chain, "getHealth")).body.result, "ok");

    chain.setFaults({ down: true });
    await waitFor(() => refused(chain.url));
    assert(await refused(chain.url.replace(/:(\d+)$/, (_, p) => `:${Number(p) + 1}`)));
    chain.setFaults({ down: false });
    assertEquals((await rpc(chain, "getHealth")).body.result, "ok");
    assertEquals(await conn.getSlot("processed"), chain.slot());
  } finally {
    await chain.close();
  }
});

Deno.test("admin routes steer a separately started chain", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const s0 = chain.slot();
    const advanced = await admin(chain, "slots", { advance: 5 });
    assertEquals(advanced.status, 200);
    assertEquals(advanced.body.slot, s0 + 5);
    assertEquals(chain.slot(), s0 + 5);

    const f = await admin(chain, "faults", { latencyMs: 20, failureRate: 0.25 });
    assertEquals(f.body.faults, { latencyMs: 20, failureRate: 0.25, down: false });
    assertEquals(chain.faults(), { latencyMs: 20, failureRate: 0.25, down: false });
    assertEquals((await admin(chain, "faults", { failureRate: 2 })).status, 400);
    await admin(chain, "faults", { latencyMs: 0, failureRate: 0 });

    // Down for a while, then back by itself on the same port.
    await admin(chain, "faults", { down: true, downForMs: 300 });
    await waitFor(() => refused(chain.url));
    await waitFor(async () => !(await refused(chain.url)), 3_000);
    assertEquals((await rpc(chain, "getHealth")).body.result, "ok");

    const state = await admin(chain, "state");
    assertEquals(state.body.faults.down, false);
    assertEquals(state.body.pythSolUsdAccount, chain.pythSolUsdAccount);
  } finally {
    await chain.close();
  }
});

Deno.test("fault knobs from the environment", async () => {
  Deno.env.set("CHAIN_LATENCY_MS", "60");
  Deno.env.set("CHAIN_SLOT_MS", "manual");
  let chain: EmbeddedChain | undefined;
  try {
    chain = await start();
    assertEquals(chain.faults().latencyMs, 60);
    const s = chain.slot();
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(chain.slot(), s, "manual slots from CHAIN_SLOT_MS");
    const t0 = performance.now();
    await rpc(chain, "getSlot");
    assert(performance.now() - t0 >= 55);
  } finally {
    Deno.env.delete("CHAIN_LATENCY_MS");
    Deno.env.delete("CHAIN_SLOT_MS");
    await chain?.close();
  }
});
