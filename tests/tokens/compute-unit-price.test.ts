/**
 * The compute-unit price a build chose is part of its record: given a fee market that bids on the
 * accounts a build writes, the record GET /v1/tokens/{mint} and GET /v1/tokens serve names the
 * very price the transaction handed out sets (its ComputeBudget SetComputeUnitPrice).
 */
import { ComputeBudgetProgram, SystemProgram, Transaction } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, startHarness } from "../support/harness.ts";
import { priorityPrice } from "../../src/tokens/costs.ts";
import { build } from "../integrators/support.ts";

/** The u64 of the transaction's SetComputeUnitPrice (instruction tag 3), as decimal digits. */
function unitPriceOf(b64: string): string {
  const tx = decodeTx(b64);
  const keys = tx.message.staticAccountKeys;
  const ix = tx.message.compiledInstructions.find((i) =>
    keys[i.programIdIndex].equals(ComputeBudgetProgram.programId) && i.data[0] === 3
  );
  assert(ix, "the transaction sets a compute-unit price");
  return new DataView(ix.data.buffer, ix.data.byteOffset + 1, 8).getBigUint64(0, true).toString();
}

Deno.test("build record: given bids on the fee market, when a token is built, then its record names the unit price its transaction sets", async () => {
  const h = await startHarness({ chain: { slotMs: "manual" } });
  try {
    const { apiKey } = await h.newApiKey();
    const c = h.services.connection;
    const bidder = h.fundedWallet(1);
    for (let i = 1; i <= 200; i++) {
      const { blockhash } = await c.getLatestBlockhash("confirmed");
      const bid = new Transaction({ feePayer: bidder.publicKey, recentBlockhash: blockhash }).add(
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 50_000 }),
        SystemProgram.transfer({
          fromPubkey: bidder.publicKey,
          toPubkey: h.treasury.publicKey,
          lamports: 1_000_000 + i,
        }),
      );
      bid.sign(bidder);
      await c.sendRawTransaction(bid.serialize());
      h.chain.advanceSlots(1);
      const fees = await c.getRecentPrioritizationFees({
        lockedWritableAccounts: [h.treasury.publicKey],
      });
      if (priorityPrice(fees, 1_000_000) === 50_000n) break;
    }

    const built = await build(h, apiKey, h.fundedWallet(1), "Price Cat");
    const price = unitPriceOf(built.transaction);
    assertEquals(price, "50000");

    const record = await (await h.request(`/v1/tokens/${built.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals(record.computeUnitPrice, price);
    const list = await (await h.request("/v1/tokens", { headers: bearer(apiKey) })).json();
    assertEquals(list.items[0].computeUnitPrice, price);
  } finally {
    await h.close();
  }
});
