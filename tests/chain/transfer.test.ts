import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { base58Encode } from "../../src/chain/codec.ts";
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  sendAndConfirmTransaction,
  SendTransactionError,
  SystemProgram,
  Transaction,
} from "@solana/web3.js";
import { connect, fund, rpc, signed, start } from "./helpers.ts";

Deno.test("SOL transfer: balances, fee and getTransaction meta", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const alice = Keypair.generate();
    const bob = Keypair.generate();
    await fund(chain, alice.publicKey, 5);
    const tx = await signed(conn, alice, [
      SystemProgram.transfer({
        fromPubkey: alice.publicKey,
        toPubkey: bob.publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const sig = await conn.sendRawTransaction(tx.serialize());
    assertEquals(await conn.getBalance(bob.publicKey, "processed"), LAMPORTS_PER_SOL);
    assertEquals(
      await conn.getBalance(alice.publicKey, "processed"),
      4 * LAMPORTS_PER_SOL - 5000,
    );

    chain.advanceSlots(1);
    const got = await conn.getTransaction(sig, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assert(got?.meta);
    assertEquals(got.meta.err, null);
    assertEquals(got.meta.fee, 5000);
    assertEquals(got.meta.preBalances.slice(0, 2), [5 * LAMPORTS_PER_SOL, 0]);
    assertEquals(got.meta.postBalances.slice(0, 2), [
      4 * LAMPORTS_PER_SOL - 5000,
      LAMPORTS_PER_SOL,
    ]);
    assertEquals(got.meta.logMessages, [
      "Program 11111111111111111111111111111111 invoke [1]",
      "Program 11111111111111111111111111111111 success",
    ]);
    assertEquals(got.meta.computeUnitsConsumed, 150);
    assertEquals(got.version, "legacy");
    assertEquals(got.transaction.signatures[0], sig);
    assertEquals(got.slot, chain.slot() - 1);
    assert(typeof got.blockTime === "number" && got.blockTime > 1_600_000_000);
  } finally {
    await chain.close();
  }
});

Deno.test("prioritization fee: charged once, reported per slot", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    const to = Keypair.generate();
    await fund(chain, payer.publicKey, 2);
    const before = await conn.getBalance(payer.publicKey, "processed");
    const tx = await signed(conn, payer, [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 20_000 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 250_000 }),
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: to.publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const fee = await conn.getFeeForMessage(tx.compileMessage(), "processed");
    assertEquals(fee.value, 5000 + 5000); // 250_000 µlamports * 20_000 CU = 5000 lamports
    const sig = await conn.sendRawTransaction(tx.serialize());
    assertEquals(
      await conn.getBalance(payer.publicKey, "processed"),
      before - LAMPORTS_PER_SOL - 10_000,
    );
    chain.advanceSlots(1);
    const got = await conn.getTransaction(sig, { commitment: "confirmed" });
    assertEquals(got?.meta?.fee, 10_000);
    const fees = await conn.getRecentPrioritizationFees({ lockedWritableAccounts: [to.publicKey] });
    const landed = fees.find((f) => f.slot === got!.slot);
    assertEquals(landed?.prioritizationFee, 250_000);
    assert(fees.every((f) => f.slot === got!.slot || f.prioritizationFee === 0));
  } finally {
    await chain.close();
  }
});

Deno.test("commitment: processed, then confirmed a slot later, finalized 32 slots later", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    chain.advanceSlots(1);
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 10_000_000,
      }),
    ]);
    const sig = await conn.sendRawTransaction(tx.serialize());
    const landing = chain.slot();

    assertEquals(await conn.getTransaction(sig, { commitment: "confirmed" }), null);
    let status = (await conn.getSignatureStatuses([sig])).value[0];
    assertEquals(status?.confirmationStatus, "processed");
    assertEquals(status?.confirmations, 0);
    assertEquals(status?.slot, landing);

    chain.advanceSlots(1);
    assert(await conn.getTransaction(sig, { commitment: "confirmed" }));
    assertEquals(await conn.getTransaction(sig, { commitment: "finalized" }), null);
    status = (await conn.getSignatureStatuses([sig])).value[0];
    assertEquals(status?.confirmationStatus, "confirmed");
    assertEquals(status?.confirmations, 1);

    chain.advanceSlots(30);
    assertEquals(await conn.getTransaction(sig, { commitment: "finalized" }), null);
    chain.advanceSlots(1);
    assert(await conn.getTransaction(sig, { commitment: "finalized" }));
    status = (await conn.getSignatureStatuses([sig])).value[0];
    assertEquals(status?.confirmationStatus, "finalized");
    assertEquals(status?.confirmations, null);

    // Commitment also picks the slot reported by slot-reading methods.
    assertEquals(await conn.getSlot("processed"), chain.slot());
    assertEquals(await conn.getSlot("confirmed"), chain.slot() - 1);
    assertEquals(await conn.getSlot("finalized"), chain.slot() - 32);
    const bad = await rpc(chain, "getTransaction", [sig, { commitment: "processed" }]);
    assertEquals(bad.body.error?.code, -32602);
  } finally {
    await chain.close();
  }
});

Deno.test("blockhash: valid for 150 blocks, then refused as the node does", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    const latest = await conn.getLatestBlockhash("processed");
    assertEquals(latest.lastValidBlockHeight, chain.blockHeight() + 150);
    const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 10_000_000,
      }),
    );
    tx.sign(payer);

    chain.advanceSlots(150);
    assert((await conn.isBlockhashValid(latest.blockhash, { commitment: "processed" })).value);
    chain.advanceSlots(1);
    assertEquals(
      (await conn.isBlockhashValid(latest.blockhash, { commitment: "processed" })).value,
      false,
    );

    const refused = await rpc(chain, "sendTransaction", [
      tx.serialize().toString("base64"),
      { encoding: "base64" },
    ]);
    assertEquals(refused.body.error?.code, -32002);
    assertEquals(refused.body.error?.message, "Transaction simulation failed: Blockhash not found");
    assertEquals((refused.body.error?.data as { err: unknown }).err, "BlockhashNotFound");

    // Without preflight the node accepts the signature but the transaction never lands.
    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    assertEquals(sig, base58Encode(tx.signature!));
    chain.advanceSlots(2);
    assertEquals(
      (await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0],
      null,
    );
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), LAMPORTS_PER_SOL);
  } finally {
    await chain.close();
  }
});

Deno.test("signatures: a bad signature and a duplicate are refused", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 10_000_000,
      }),
    ]);
    const wire = tx.serialize();
    const forged = Uint8Array.from(wire);
    forged[5] ^= 0xff; // inside the first signature

    const bad = await rpc(chain, "sendTransaction", [
      btoa(String.fromCharCode(...forged)),
      { encoding: "base64" },
    ]);
    assertEquals(bad.body.error, {
      code: -32003,
      message: "Transaction signature verification failure",
    });
    const skipped = await rpc(chain, "sendTransaction", [
      btoa(String.fromCharCode(...forged)),
      { encoding: "base64", skipPreflight: true },
    ]);
    assertEquals(typeof skipped.body.result, "string");
    chain.advanceSlots(1);
    assertEquals((await conn.getSignatureStatuses([skipped.body.result as string])).value[0], null);
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), LAMPORTS_PER_SOL);

    const sig = await conn.sendRawTransaction(wire);
    const err = await assertRejects(() => conn.sendRawTransaction(wire), SendTransactionError);
    assert(err.message.includes("This transaction has already been processed"), err.message);
    const dup = await rpc(chain, "sendTransaction", [wire.toString("base64"), {
      encoding: "base64",
    }]);
    assertEquals((dup.body.error?.data as { err: unknown }).err, "AlreadyProcessed");
    // Sent again without preflight: same signature back, still landed once.
    assertEquals(await conn.sendRawTransaction(wire, { skipPreflight: true }), sig);
    chain.advanceSlots(1);
    assertEquals(
      await conn.getBalance(payer.publicKey, "processed"),
      LAMPORTS_PER_SOL - 10_000_000 - 5000,
    );
    const history = await conn.getSignaturesForAddress(payer.publicKey);
    assertEquals(history.filter((h) => h.signature === sig).length, 1);
  } finally {
    await chain.close();
  }
});

Deno.test("sendAndConfirmTransaction over HTTP + PubSub with running slots", async () => {
  const chain = await start({ slotMs: 20 });
  try {
    const conn = connect(chain);
    const payer = Keypair.generate();
    const sig0 = await conn.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL);
    const latest = await conn.getLatestBlockhash();
    await conn.confirmTransaction({ signature: sig0, ...latest }, "confirmed");
    const to = Keypair.generate().publicKey;
    const sig = await sendAndConfirmTransaction(
      conn,
      new Transaction().add(
        SystemProgram.transfer({
          fromPubkey: payer.publicKey,
          toPubkey: to,
          lamports: LAMPORTS_PER_SOL,
        }),
      ),
      [payer],
      { commitment: "confirmed" },
    );
    const status = (await conn.getSignatureStatus(sig)).value;
    assert(
      status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized",
    );
    assertEquals(await conn.getBalance(to), LAMPORTS_PER_SOL);
    const airdrop = await conn.getTransaction(sig0, { commitment: "confirmed" });
    assertEquals(airdrop?.meta?.postBalances[1], 2 * LAMPORTS_PER_SOL);
    await new Promise((r) => setTimeout(r, 650));
  } finally {
    await chain.close();
  }
});
