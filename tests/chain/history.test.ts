import { assert, assertEquals } from "../support/assert.ts";
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import { connect, fund, rpc, signed, start } from "./helpers.ts";

const MEMO = new PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

Deno.test("getSignaturesForAddress: a reference key finds its payments, newest first", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    const merchant = Keypair.generate().publicKey;
    const reference = Keypair.generate().publicKey;
    await fund(chain, payer.publicKey, 5);

    const sigs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const transfer = SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: merchant,
        lamports: 10_000_000 + i,
      });
      // Solana Pay: the reference rides along as a read-only, non-signer key.
      transfer.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
      const ixs = [transfer];
      if (i === 2) {
        ixs.push(
          new TransactionInstruction({
            programId: MEMO,
            keys: [],
            data: Buffer.from("order 42"),
          }),
        );
      }
      const tx = await signed(conn, payer, ixs);
      sigs.push(await conn.sendRawTransaction(tx.serialize()));
      if (i % 2 === 1) chain.advanceSlots(1); // some share a slot, some don't
    }
    // An unrelated payment from the same payer must not show up under the reference.
    const other = await signed(conn, payer, [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: merchant, lamports: 1e7 }),
    ]);
    await conn.sendRawTransaction(other.serialize());

    // Nothing is confirmed yet for the last landing slot; confirmed needs one more slot.
    chain.advanceSlots(1);
    const all = await conn.getSignaturesForAddress(reference, {}, "confirmed");
    assertEquals(all.map((s) => s.signature), [...sigs].reverse());
    assert(all.every((s, i) => i === 0 || s.slot <= all[i - 1].slot));
    assertEquals(all.find((s) => s.signature === sigs[2])?.memo, "[8] order 42");
    assertEquals(all.find((s) => s.signature === sigs[1])?.memo, null);
    assert(all.every((s) => s.err === null && s.confirmationStatus === "confirmed"));
    assert(all.every((s) => typeof s.blockTime === "number"));

    const limited = await conn.getSignaturesForAddress(reference, { limit: 2 }, "confirmed");
    assertEquals(limited.map((s) => s.signature), [sigs[4], sigs[3]]);
    const before = await conn.getSignaturesForAddress(
      reference,
      { before: sigs[3], limit: 2 },
      "confirmed",
    );
    assertEquals(before.map((s) => s.signature), [sigs[2], sigs[1]]);
    const until = await conn.getSignaturesForAddress(reference, { until: sigs[1] }, "confirmed");
    assertEquals(until.map((s) => s.signature), [sigs[4], sigs[3], sigs[2]]);
    const window = await conn.getSignaturesForAddress(
      reference,
      { before: sigs[4], until: sigs[0] },
      "confirmed",
    );
    assertEquals(window.map((s) => s.signature), [sigs[3], sigs[2], sigs[1]]);

    // Finalized (the node's default) hides what is not yet rooted.
    assertEquals((await conn.getSignaturesForAddress(reference, {}, "finalized")).length, 0);
    const raw = await rpc(chain, "getSignaturesForAddress", [reference.toBase58()]);
    assertEquals(raw.body.result, []);
    chain.advanceSlots(32);
    assertEquals((await conn.getSignaturesForAddress(reference, {}, "finalized")).length, 5);

    const merchantSigs = await conn.getSignaturesForAddress(merchant, {}, "confirmed");
    assertEquals(merchantSigs.length, 6);
    const bad = await rpc(chain, "getSignaturesForAddress", [
      reference.toBase58(),
      { limit: 1001 },
    ]);
    assertEquals(bad.body.error, { code: -32602, message: "Invalid limit; max 1000" });
  } finally {
    await chain.close();
  }
});
