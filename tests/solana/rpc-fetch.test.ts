/**
 * The service's bounded RPC fetch against the embedded chain's own fault knobs: what is retried,
 * what never is, and that a node which never answers cannot hold a call past its budget.
 */
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from "@solana/web3.js";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { fund, signed, start } from "../chain/helpers.ts";
import type { EmbeddedChain } from "../../src/chain/mod.ts";
import { boundedRpcFetch, type RpcFetchOptions } from "../../src/solana/rpc-fetch.ts";
import { RpcBudget } from "../../src/solana/rpc-budget.ts";
import { refusalIn } from "../../src/solana/rpc-refusals.ts";
import { ThrottleLog } from "../../src/solana/rpc-throttle-log.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";

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

function budgeted(
  chain: EmbeddedChain,
  priority: "user" | "background",
  budget: RpcBudget,
  logger = memoryLogger(),
) {
  const seen: { at: number; method: string; status: number; retryAfter: string | null }[] = [];
  const base: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    seen.push({
      at: Date.now(),
      method: JSON.parse(String(init?.body)).method,
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
    });
    return res;
  };
  const conn = new Connection(chain.url, {
    commitment: "confirmed",
    disableRetryOnRateLimit: true,
    fetch: boundedRpcFetch({
      timeoutMs: 5_000,
      retries: 2,
      backoffMs: 10,
      base,
      budget,
      priority,
      throttleLog: new ThrottleLog(logger),
    }),
  });
  return { conn, seen, logger };
}

Deno.test("rpc fetch: a 429 is waited out for its Retry-After, then the call goes again and succeeds, for background and for a user read that may wait", async () => {
  for (const priority of ["background", "user"] as const) {
    const chain = await start({ slotMs: "manual", rpcLimits: "public" });
    try {
      // Our own budget unlimited: the chain's limit is what stops the 41st call.
      const budget = new RpcBudget({ total: null, perMethod: null, windowMs: 10_000 }, {
        userWaitMs: 15_000,
      });
      const { conn, seen, logger } = budgeted(chain, priority, budget);
      for (let i = 0; i < 40; i++) await conn.getSlot();
      assert(typeof await conn.getSlot() === "number", "the 41st call failed");
      const refused = seen.filter((s) => s.status === 429);
      assertEquals(refused.length, 1, `${priority}: ${refused.length} 429s`);
      const retried = seen.at(-1)!;
      assertEquals(retried.status, 200);
      const waited = retried.at - refused[0].at;
      assert(
        waited >= Number(refused[0].retryAfter) * 1000,
        `${priority}: retried after ${waited} ms, Retry-After ${refused[0].retryAfter} s`,
      );
      assertEquals(logger.lines.filter((l) => l.includes("RPC is throttling")).length, 1);
    } finally {
      await chain.close();
    }
  }
});

Deno.test("rpc fetch: a send that meets a 429 fails at once for a user (RpcBusyError with the Retry-After), never sent twice", async () => {
  const chain = await start({ slotMs: "manual", rpcLimits: "public" });
  try {
    const budget = new RpcBudget({ total: null, perMethod: null, windowMs: 10_000 });
    const { conn, seen } = budgeted(chain, "user", budget);
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey);
    // One blockhash for all: 41 getLatestBlockhash calls would meet the limit first.
    const { blockhash } = await conn.getLatestBlockhash();
    const txs = Array.from({ length: 41 }, (_, i) => {
      const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
        SystemProgram.transfer({
          fromPubkey: payer.publicKey,
          toPubkey: Keypair.generate().publicKey,
          lamports: 1_000_000 + i,
        }),
      );
      tx.sign(payer);
      return tx;
    });
    for (let i = 0; i < 40; i++) await conn.sendRawTransaction(txs[i].serialize());
    const e = await assertRejects(() => conn.sendRawTransaction(txs[40].serialize()));
    const refusal = refusalIn(e);
    assert(refusal, `not a budget refusal: ${e}`);
    const sends = seen.filter((s) => s.method === "sendTransaction");
    assertEquals(sends.length, 41);
    assertEquals(refusal.retryAfterMs, Number(sends.at(-1)!.retryAfter) * 1000);
  } finally {
    await chain.close();
  }
});

Deno.test("rpc fetch: -32005 answers are retried for reads and logged once a minute, not per call", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const budget = new RpcBudget({ total: null, perMethod: null, windowMs: 10_000 });
    const { conn, seen, logger } = budgeted(chain, "user", budget);
    chain.setFaults({ failureRate: 1 });
    for (let i = 0; i < 10; i++) await assertRejects(() => conn.getSlot());
    assertEquals(seen.length, 30, "3 attempts per read");
    const lines = logger.lines.filter((l) => l.includes("RPC is throttling"));
    assertEquals(lines.length, 1);
    assertEquals(JSON.parse(lines[0]).byKind, { "-32005": 1 });
  } finally {
    await chain.close();
  }
});
