/**
 * The watcher's RPC cost does not grow with the number of open builds, on the embedded chain
 * through a counting fetch: a sweep lists the treasury once; a full sweep adds the block height
 * and one getMultipleAccounts per 100 open mints; a landing is read once. A creation that does not
 * pay us is still found, by its mint, on the full sweep. A relayed transaction is not re-sent
 * once the cluster has seen it. An open update adds nothing to a sweep.
 */
import {
  type Keypair,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { buildBy } from "../../src/creation/build-records.ts";
import { rebroadcast, sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { countingFetch } from "../support/counting-fetch.ts";
import { appendOpenBuilds } from "../support/synthetic-build.ts";
import { createToken, update } from "../support/token-update-flow.ts";

async function build(h: Harness, apiKey: string, payer: string, name: string) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: { payer, name, symbol: "CST", metadataUri: "https://example.com/m/c.json", supply: "7" },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return { mint: body.mint as string, tx: decodeTx(body.transaction) };
}

/** Builds, signs and relays one token; returns what a rebroadcast message carries. */
async function relayOne(h: Harness, apiKey: string, wallet: Keypair, name: string) {
  const b = await build(h, apiKey, wallet.publicKey.toBase58(), name);
  b.tx.sign([wallet]);
  const transaction = btoa(String.fromCharCode(...b.tx.serialize()));
  const res = await h.request("/v1/transactions", {
    method: "POST",
    headers: bearer(apiKey),
    json: { transaction },
  });
  assertEquals(res.status, 202);
  const signature = bs58.encode(b.tx.signatures[0]);
  const { buildId } = (await buildBy(h.kv, "build_by_mint", b.mint))!;
  return { mint: b.mint, transaction, signature, buildId };
}

const status = async (h: Harness, mint: string) =>
  (await buildBy(h.kv, "build_by_mint", mint))!.status;

Deno.test("sweep cost: none with no open build; one listing per sweep and one batch of mints per 100 on a full sweep, however many are open", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const k = await h.newApiKey();
    rpc.take();
    await sweepOpenBuilds(h.services);
    assertEquals(rpc.take(), {}, "no open build: no call");

    const height = await h.services.connection.getBlockHeight("confirmed");
    await appendOpenBuilds(h.services.store, 250, {
      firstId: 10_000,
      key: k,
      treasury: h.services.treasury.toBase58(),
      lastValidBlockHeight: height + 100_000,
      at: h.services.clock(),
    });
    rpc.take();
    // The first listing goes back to the oldest open build, less a margin for clocks: it reads
    // this test's access payment once. Later ones list only newer transactions: none here.
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1, getTransaction: 1 });
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1 });
    await sweepOpenBuilds(h.services);
    assertEquals(rpc.take(), {
      getSignaturesForAddress: 1,
      getBlockHeight: 1,
      getMultipleAccounts: 3,
    });
  } finally {
    await h.close();
  }
});

Deno.test("a landing that pays us is recorded by the next sweep, read once; one that does not is found by its mint on the full sweep", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const payer = wallet.publicKey.toBase58();
    const paying = await build(h, apiKey, payer, "Paying");
    const feeless = await build(h, apiKey, payer, "Feeless");
    // The fee-less one: its payer drops the fee transfer (the last instruction) before signing,
    // so neither the treasury nor the reference is in it.
    const decompiled = TransactionMessage.decompile(feeless.tx.message);
    const fee = decompiled.instructions.pop()!;
    assertEquals(fee.programId.equals(SystemProgram.programId), true);
    feeless.tx = new VersionedTransaction(decompiled.compileToLegacyMessage());
    for (const b of [paying, feeless]) b.tx.sign([wallet]);
    // A first sweep reads what the treasury received before (the access payment) once.
    await sweepOpenBuilds(h.services, { full: false });
    const c = h.services.connection;
    const sigs = [];
    for (const b of [paying, feeless]) sigs.push(await c.sendRawTransaction(b.tx.serialize()));
    for (const s of sigs) await h.waitForConfirmation(s);

    rpc.take();
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1, getTransaction: 1 });
    assertEquals(await status(h, paying.mint), "confirmed");
    assertEquals(await status(h, feeless.mint), "built", "it never touched the treasury");

    await sweepOpenBuilds(h.services);
    const calls = rpc.take();
    assertEquals(calls.getMultipleAccounts, 1);
    assertEquals(calls.getTransaction, 1, "only the candidate is read");
    const r = await (await h.request(`/v1/tokens/${feeless.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals([r.status, r.signature, r.feeVerified], ["unverified", sigs[1], false]);
  } finally {
    await h.close();
  }
});

Deno.test("lamports sent to a mint's address by someone else do not make the build look landed", async () => {
  const h = await startHarness({ chain: { slotMs: "manual" } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const b = await build(h, apiKey, wallet.publicKey.toBase58(), "Poked");
    h.chain.airdrop(b.mint, 1_000_000_000n);
    await sweepOpenBuilds(h.services);
    assertEquals(await status(h, b.mint), "built");
    // Past its blockhash it expires as any build nobody sent.
    const { lastValidBlockHeight } = (await buildBy(h.kv, "build_by_mint", b.mint))!;
    const height = await h.services.connection.getBlockHeight("confirmed");
    h.chain.advanceSlots(lastValidBlockHeight! - height + 2);
    await sweepOpenBuilds(h.services);
    assertEquals(await status(h, b.mint), "expired");
  } finally {
    await h.close();
  }
});

Deno.test("a relayed transaction is not re-sent once the cluster has seen it", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const r = await relayOne(h, apiKey, wallet, "Relayed");
    const { mint: _, ...msg } = { ...r, attempt: 0 };
    await h.waitForConfirmation(r.signature);
    rpc.take();
    assertEquals(await rebroadcast(h.services, msg), false, "seen: no next attempt");
    assertEquals(rpc.take(), { getSignatureStatuses: 1 }, "and nothing sent");
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(await status(h, r.mint), "confirmed");
    rpc.take();
    assertEquals(await rebroadcast(h.services, msg), false);
    assertEquals(rpc.take(), {}, "recorded: not even a status call");
    // The record keeps the relayed signature.
    assertEquals((await buildBy(h.kv, "build_by_mint", r.mint))!.signature, r.signature);
  } finally {
    await h.close();
  }
});

Deno.test("a relayed transaction the network lost is sent again until the cluster has seen it, then not", async () => {
  // A node that loses what it is sent while `losing` is set (answers as if it took it).
  let losing = false;
  const sends: string[] = [];
  const lossy: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (body?.method === "sendTransaction") {
      const tx = VersionedTransaction.deserialize(
        Uint8Array.from(atob(body.params[0]), (c) => c.charCodeAt(0)),
      );
      const sig = bs58.encode(tx.signatures[0]);
      sends.push(sig);
      if (losing) return Response.json({ jsonrpc: "2.0", id: body.id, result: sig });
    }
    return await fetch(input, init);
  };
  const h = await startHarness({ rpcFetch: lossy });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    sends.length = 0;
    losing = true;
    const r = await relayOne(h, apiKey, wallet, "Lost");
    const signature = r.signature;
    assertEquals(sends, [signature], "the relay sent it once, and it was lost");
    const { mint: _, ...msg } = { ...r, attempt: 1 };
    losing = false;
    assertEquals(await rebroadcast(h.services, msg), true, "not seen: sent, and tried again");
    assertEquals(sends.length, 2);
    await h.waitForConfirmation(signature);
    assertEquals(await rebroadcast(h.services, msg), false, "seen: no more");
    assertEquals(sends.length, 2, "not sent again");
  } finally {
    await h.close();
  }
});

Deno.test("a flood of transfers to the treasury costs at most 50 reads a sweep and delays a landing by sweeps, never loses it", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const b = await build(h, apiKey, wallet.publicKey.toBase58(), "Flooded");
    await sweepOpenBuilds(h.services, { full: false }); // the cursor past the access payment
    const flooder = h.fundedWallet(5);
    const c = h.services.connection;
    const { blockhash } = await c.getLatestBlockhash("confirmed");
    const sigs = [];
    for (let i = 0; i < 70; i++) {
      const tx = new Transaction({ feePayer: flooder.publicKey, recentBlockhash: blockhash }).add(
        SystemProgram.transfer({
          fromPubkey: flooder.publicKey,
          toPubkey: h.treasury.publicKey,
          lamports: 1 + i,
        }),
      );
      tx.sign(flooder);
      sigs.push(await c.sendRawTransaction(tx.serialize()));
    }
    for (const s of sigs) await h.waitForConfirmation(s);
    b.tx.sign([wallet]);
    const sig = await c.sendRawTransaction(b.tx.serialize());
    await h.waitForConfirmation(sig);

    rpc.take();
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1, getTransaction: 50 });
    assertEquals(await status(h, b.mint), "built");
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1, getTransaction: 21 });
    assertEquals(await status(h, b.mint), "confirmed");
  } finally {
    await h.close();
  }
});

Deno.test("sweep cost: an open relayed update adds no call; its follow-up pays for it (update-relay.test.ts)", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    await sweepOpenBuilds(h.services);
    assertEquals(await status(h, mint), "confirmed");
    const u = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      freezeAuthority: null,
    });
    assertEquals(u.status, 201, JSON.stringify(u.body));
    const tx = decodeTx(u.body.transaction);
    tx.sign([wallet]);
    const res = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: { transaction: btoa(String.fromCharCode(...tx.serialize())) },
    });
    assertEquals([res.status, (await res.json()).updateId], [202, u.body.updateId]);
    rpc.take();
    await sweepOpenBuilds(h.services);
    assertEquals(rpc.take(), {}, "no open build, one open update: no call");
  } finally {
    await h.close();
  }
});
