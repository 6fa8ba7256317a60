/**
 * Block time follows the (injected) wall clock: a block's time is when its transactions landed,
 * not only when its slot began, and never goes backwards.
 */
import { Keypair, SystemProgram } from "@solana/web3.js";
import { assertEquals } from "../support/assert.ts";
import { connect, fund, signed, start } from "./helpers.ts";

Deno.test("block time: a transaction carries the time it landed; block times never go back", async () => {
  let nowMs = 1_900_000_000_000;
  const chain = await start({ slotMs: "manual", now: () => nowMs });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    chain.advanceSlots(1); // the slot begins at 1_900_000_000
    const slot = chain.slot();
    assertEquals(await conn.getBlockTime(slot), 1_900_000_000);

    nowMs += 7_400; // the transaction arrives 7.4 s into the slot
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    ]);
    const sig = await conn.sendRawTransaction(tx.serialize());
    chain.advanceSlots(1);
    const got = await conn.getTransaction(sig, { commitment: "confirmed" });
    assertEquals([got!.slot, got!.blockTime], [slot, 1_900_000_007]);
    assertEquals(await conn.getBlockTime(slot), 1_900_000_007);

    // A clock stepping back (NTP) never makes a later block older.
    nowMs -= 60_000;
    chain.advanceSlots(1);
    assertEquals(await conn.getBlockTime(chain.slot()), 1_900_000_007);
  } finally {
    await chain.close();
  }
});
