/**
 * The service's bounded RPC fetch against the embedded chain's own fault knobs: what is retried,
 * what never is, and that a node which never answers cannot hold a call past its budget.
 */
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram } from "@solana/web3.js";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { fund, signed, start } from "../chain/helpers.ts";
import type { EmbeddedChain } from "../../src/chain/mod.ts";
import { boundedRpcFetch, type RpcFetchOptions } from "../../src/solana/rpc-fetch.ts";

function counted(chain: EmbeddedChain, opts: Omit<RpcFetchOptions, "base">) {
  const methods: string[] = [];
  const base: typeof fetch = (input, init) => {
    methods.push(JSON.parse(String(init?.body)).method);
    return fetch(input, init);
  };
  const conn = new Connection(chain.url, {
    commitment: "confirmed",
    disableRetryOnRateLimit: true,
    fetch: boundedRpcFetch({ ...opts, base }),
  });
  return { conn, methods };
}

Deno.test("rpc fetch: a read that meets a 503 is retried up to the limit, then fails", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const { conn, methods } = counted(chain, { timeoutMs: 5_000, retries: 2, backoffMs: 10 });
    chain.setFaults({ failureRate: 1 });
    await assertRejects(() => conn.getSlot());
    assertEquals(methods, ["getSlot", "getSlot", "getSlot"]);
    chain.setFaults({ failureRate: 0 });
    methods.length = 0;
    assert(typeof await conn.getSlot() === "number");
    assertEquals(methods, ["getSlot"]);
  } finally {
    await chain.close();
  }
});

Deno.test("rpc fetch: a read retried across a short outage succeeds", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const { conn, methods } = counted(chain, { timeoutMs: 60_000, retries: 4, backoffMs: 100 });
    chain.setFaults({ down: true });
    const wallet = Keypair.generate();
    const balance = conn.getBalance(wallet.publicKey);
    // Back up once a retry has started (so the first attempt met the outage), however slow.
    while (methods.length < 2) await new Promise((r) => setTimeout(r, 5));
    chain.setFaults({ down: false });
    assertEquals(await balance, 0);
    assert(methods.length >= 2, `the first attempt met the outage (${methods.length} attempts)`);
  } finally {
    await chain.close();
  }
});

Deno.test("rpc fetch: sendTransaction is never repeated, even on a 503", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const { conn, methods } = counted(chain, { timeoutMs: 5_000, retries: 3, backoffMs: 10 });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey);
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: LAMPORTS_PER_SOL / 100,
      }),
    ]);
    chain.setFaults({ failureRate: 1 });
    methods.length = 0;
    await assertRejects(() => conn.sendRawTransaction(tx.serialize()));
    assertEquals(methods, ["sendTransaction"]);
  } finally {
    await chain.close();
  }
});

Deno.test("rpc fetch: a node that never answers fails the call when the budget runs out", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const { conn } = counted(chain, { timeoutMs: 400, retries: 2, backoffMs: 10 });
    // The node would answer after a minute; a generous bound still tells the budget ended it.
    chain.setFaults({ latencyMs: 60_000 });
    const t0 = performance.now();
    const err = await assertRejects(() => conn.getSlot());
    const ms = performance.now() - t0;
    assert(ms >= 350 && ms < 30_000, `failed after ${ms} ms`);
    assert(String(err).includes("timed out after 400 ms"), String(err));
  } finally {
    chain.setFaults({ latencyMs: 0 });
    await chain.close();
  }
});
