/**
 * The watcher's treasury cursor belongs to one treasury on one cluster. With one cursor for all,
 * a sweep for another treasury (a changed TREASURY_ADDRESS on the same KV) left it naming that
 * treasury's newest signature: the first treasury's listing then stopped there (`until` is
 * placed in the whole ledger, not in one address's history) and skipped what landed before it.
 * On another cluster the signature is unknown and the listing starts over. On the embedded
 * chain through a counting fetch.
 */
import { Keypair, type PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { assertEquals } from "../support/assert.ts";
import { type Harness, startHarness } from "../support/harness.ts";
import { countingFetch } from "../support/counting-fetch.ts";
import { build } from "../integrators/support.ts";

/** Transfers to `to` that settle no build: the scan reads each once and passes on. */
async function transfers(h: Harness, from: Keypair, to: PublicKey, n: number) {
  const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
  for (let i = 0; i < n; i++) {
    const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: 1_000_000 + i }),
    );
    tx.sign(from);
    await h.waitForConfirmation(await h.services.connection.sendRawTransaction(tx.serialize()));
  }
}

Deno.test("watcher: a sweep for another treasury on the same KV leaves the first treasury's cursor as it was", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    await build(h, apiKey, wallet, "Open Cat"); // an open build: the sweeps scan the treasury
    await sweepOpenBuilds(h.services, { full: false }); // reads the access payment
    const payer = h.fundedWallet();
    await transfers(h, payer, h.treasury.publicKey, 3);
    rpc.take();
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take().getTransaction, 3);

    // Two more land for the first treasury; then, on the same KV, a sweep for another treasury
    // (TREASURY_ADDRESS changed and back, or a second deployment) reads that one's.
    await transfers(h, payer, h.treasury.publicKey, 2);
    const other = Keypair.generate().publicKey;
    await transfers(h, payer, other, 2);
    rpc.take();
    await sweepOpenBuilds({ ...h.services, treasury: other }, { full: false });
    assertEquals(rpc.take().getTransaction, 2);

    // Back on the first: its two new ones are read, the older three are not read again. (A
    // cursor naming the other treasury's newer signature made the listing stop there, as the
    // RPC's `until` does, so these two were skipped.)
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1, getTransaction: 2 });
    await sweepOpenBuilds(h.services, { full: false });
    assertEquals(rpc.take(), { getSignaturesForAddress: 1 });
  } finally {
    await h.close();
  }
});
