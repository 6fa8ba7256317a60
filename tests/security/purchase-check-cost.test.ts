/**
 * A purchase's payment check is cheap to repeat. Anyone can drive it (600 checks an hour per
 * address, no key) on their own quote after landing transactions that carry its reference; each
 * check used to list and read the whole history again. Now a check goes on from where the last
 * one got to: on the embedded chain, through a counting fetch, a repeated check lists only what
 * landed since and reads nothing again, and a flood deeper than one lookup pages through is paged
 * through once, not on every check.
 */
import { type Keypair, PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { type Harness, startHarness } from "../support/harness.ts";
import { countingFetch } from "../support/counting-fetch.ts";
import { findPaymentFrom, type PaymentCursor } from "../../src/domain/access/payment.ts";

/**
 * Transactions the wallet itself signs that carry the reference and pay us nothing (a 1-lamport
 * transfer elsewhere): not foreign, so nothing else remembers them.
 */
async function noise(h: Harness, wallet: Keypair, reference: string, n: number, from = 0) {
  const sink = new PublicKey(new Uint8Array(32).fill(7));
  const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
  const sigs: string[] = [];
  for (let i = from; i < from + n; i++) {
    const ix = SystemProgram.transfer({
      fromPubkey: wallet.publicKey,
      toPubkey: sink,
      lamports: 1_000_000 + i,
    });
    ix.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
    const tx = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: blockhash }).add(ix);
    tx.sign(wallet);
    sigs.push(await h.services.connection.sendRawTransaction(tx.serialize()));
  }
  for (const sig of sigs) await h.waitForConfirmation(sig);
}

async function pay(h: Harness, wallet: Keypair, quote: { transaction: string }) {
  const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
  tx.partialSign(wallet);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

Deno.test("given 30 transactions of the wallet on its quote's reference, when the check is repeated, then each repeat lists once and reads nothing again", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const wallet = h.fundedWallet();
    const cookie = await h.signIn(wallet);
    const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    await noise(h, wallet, quote.reference, 30);
    const check = async () =>
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();

    rpc.take();
    assertEquals((await check()).status, "pending");
    assertEquals(rpc.take(), { getSignaturesForAddress: 1, getTransaction: 30 });
    for (let i = 0; i < 3; i++) {
      assertEquals((await check()).status, "pending");
      assertEquals(rpc.take(), { getSignaturesForAddress: 1 }, `repeat ${i + 1}`);
    }

    // What lands later is read, and only that.
    await noise(h, wallet, quote.reference, 2, 100);
    const paid = await pay(h, wallet, quote);
    rpc.take();
    const done = await check();
    assertEquals([done.status, done.signature], ["paid", paid]);
    const calls = rpc.take();
    assertEquals(calls.getTransaction, 3, JSON.stringify(calls));
  } finally {
    await h.close();
  }
});

Deno.test("given a payment under more transactions than one lookup pages through, then lookups go on down from where the last stopped, find it, and list each page about once", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const wallet = h.fundedWallet();
    const cookie = await h.signIn(wallet);
    const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    const paid = await pay(h, wallet, quote);
    await noise(h, wallet, quote.reference, 40);
    const request = {
      wallet: wallet.publicKey,
      treasury: h.treasury.publicKey,
      currency: "SOL" as const,
      amount: BigInt(quote.amount),
      reference: new PublicKey(quote.reference),
    };
    // Scaled down: pages of 5, 3 pages a lookup (41 transactions are 9 pages).
    const limits = { pageSize: 5, maxPages: 3, kv: h.kv, logger: h.services.logger };
    let cursor: PaymentCursor = {};
    const counted = new Set<string>();
    rpc.take();
    let foundAt = -1;
    let lookups = 0;
    for (; lookups < 20; lookups++) {
      const fromTop = !cursor.boundaries?.length;
      const r = await findPaymentFrom(h.services.connection, request, limits, counted, cursor);
      cursor = r.cursor;
      if (r.found) {
        assertEquals(r.found.signature, paid);
        foundAt = lookups;
        counted.add(r.found.signature);
      }
      // Done when a lookup from the top went all the way down to what was examined.
      if (foundAt >= 0 && fromTop && !r.found && !cursor.boundaries?.length) break;
    }
    // Each lookup pages 2 further down (it stops one page above its lowest); the 4th reaches
    // the bottom and finds the payment.
    assertEquals(foundAt, 3);
    const calls = rpc.take();
    // Down: 3 pages each for 4 lookups. Back up: each stretch between two stops is listed once
    // more (2 pages and the page saying it ends there); the top stretch from the top.
    assert(calls.getSignaturesForAddress <= 4 * 3 + 4 * 3 + 3, JSON.stringify(calls));
    assertEquals(lookups + 1, 8, "4 down, 3 back up, 1 for the top");
    // Each transaction read once.
    assertEquals(calls.getTransaction, 41, JSON.stringify(calls));
    assertEquals(cursor.boundaries, []);
    // All examined: a lookup now lists once and reads nothing.
    const again = await findPaymentFrom(h.services.connection, request, limits, counted, cursor);
    assertEquals(again.found, null);
    assertEquals(rpc.take(), { getSignaturesForAddress: 1 });
  } finally {
    await h.close();
  }
});
