import { assert, assertEquals } from "../support/assert.ts";
import { Keypair, LAMPORTS_PER_SOL, type Logs, PublicKey, SystemProgram } from "@solana/web3.js";
import { decodePriceUpdateV2 } from "../../src/solana/pyth-receiver.ts";
import { connect, fund, settleWebSocket, signed, start, waitFor } from "./helpers.ts";

Deno.test("PubSub: account, logs and slot notifications through web3.js", async () => {
  const chain = await start({ slotMs: 25 });
  try {
    const conn = connect(chain);
    const slots: number[] = [];
    const prices: { slot: number; price: number }[] = [];
    const logs: Logs[] = [];
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;

    const slotSub = conn.onSlotChange((s) => slots.push(s.slot));
    const pythSub = conn.onAccountChange(
      new PublicKey(chain.pythSolUsdAccount),
      (acc, ctx) => prices.push({ slot: ctx.slot, price: decodePriceUpdateV2(acc.data).price }),
      "processed",
    );
    const logsSub = conn.onLogs(to, (l) => logs.push(l), "confirmed");

    await waitFor(() => slots.length >= 3 && prices.length >= 3);
    assert(slots.every((s, i) => i === 0 || s > slots[i - 1]));
    assertEquals(prices[0].price, 150);
    chain.setSolPrice(151.5);
    await waitFor(() => prices.some((p) => p.price === 151.5));

    await fund(chain, payer.publicKey, 2);
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: to,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const sig = await conn.sendRawTransaction(tx.serialize());
    await waitFor(() => logs.length > 0);
    assertEquals(logs[0].signature, sig);
    assertEquals(logs[0].err, null);
    assertEquals(logs[0].logs[0], "Program 11111111111111111111111111111111 invoke [1]");

    await conn.removeSlotChangeListener(slotSub);
    await conn.removeAccountChangeListener(pythSub);
    await conn.removeOnLogsListener(logsSub);
    await settleWebSocket();
  } finally {
    await chain.close();
  }
});
