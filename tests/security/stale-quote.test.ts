/**
 * Access quotes expire. Given the embedded chain (block times are the real time) and a service
 * whose clock and SOL price the test moves, a payment is priced by when it landed: within the
 * quote's validity at the quoted amount, later at the current price; a short payment is recorded
 * and a top-up pays the rest.
 */
import { Keypair, Transaction } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import type { PriceSource, SolPrice } from "../../src/pricing/price-source.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";

const HOUR = 3_600_000;

/** A price the test sets, and a clock it can wind back (the chain keeps the real time). */
function world() {
  const w = { usd: 300, offsetMs: 0 };
  const clock = () => Date.now() + w.offsetMs;
  const current = (): SolPrice => ({
    usd: w.usd,
    publishTime: Math.floor(clock() / 1000),
    source: "fixed",
  });
  const price: PriceSource = { solUsd: () => Promise.resolve(current()), current };
  return Object.assign(w, { clock, price });
}

async function pay(h: Harness, wallet: Keypair, quote: { transaction: string }) {
  const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
  // A fresh blockhash: what an attacker holding an old quote would do.
  tx.recentBlockhash = (await h.services.connection.getLatestBlockhash("confirmed")).blockhash;
  tx.signatures = [];
  tx.sign(wallet);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

const eventTypes = async (h: Harness) => {
  const out = [];
  for await (const e of h.services.store.readAll()) out.push(e);
  return out;
};

Deno.test("given a quote at $300/SOL and the price back at $150, when it is paid within its validity, then it counts at the quoted amount", async () => {
  const w = world();
  const h = await startHarness({ clock: w.clock, price: w.price });
  try {
    const wallet = h.fundedWallet();
    const cookie = await h.signIn(wallet);
    const res = await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" });
    const quote = await res.json();
    assertEquals(quote.amount, "33333334");
    assert(Math.abs(quote.expiresAt - (w.clock() + 600_000)) < 60_000, "expires 600 s on");
    w.usd = 150;
    await pay(h, wallet, quote);
    const check =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals([check.status, check.receivedLamports], ["paid", "33333334"]);
    const key = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(key.status, 201);
    await key.body?.cancel();
  } finally {
    await h.close();
  }
});

Deno.test("given a quote at $300/SOL that expired, when it is paid after the price fell to $150, then it is underpaid, recorded, and a top-up buys access", async () => {
  const w = world();
  w.offsetMs = -2 * HOUR; // the quote is made two hours before the payment lands
  const h = await startHarness({ clock: w.clock, price: w.price });
  try {
    const wallet = h.fundedWallet();
    const cookie = await h.signIn(wallet);
    const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    assertEquals(quote.amount, "33333334");
    w.offsetMs = 0;
    w.usd = 150;
    const first = await pay(h, wallet, quote);

    const check =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals(check.status, "underpaid");
    assertEquals(check.receivedLamports, "33333334");
    // $10 at $150/SOL is 66,666,667 lamports; the payment was worth half of it.
    assertEquals(check.shortfall, "33333333");
    const early = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(early.status, 400);
    await early.body?.cancel();

    const recorded = (await eventTypes(h)).filter((e) => e.type === "AccessUnderpaid");
    assertEquals(recorded.length, 1);
    const data = recorded[0].data as Record<string, unknown>;
    assertEquals(
      [data.signature, data.received, data.late, data.shortfall, data.solUsd],
      [first, "33333334", true, "33333333", 150],
    );
    // Checking again counts nothing twice.
    const again =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals([again.status, again.receivedLamports], ["underpaid", "33333334"]);

    // The portal shows it with what is missing, and offers a top-up for the difference.
    const state = await (await h.portal(cookie, "/portal/api/state")).json();
    assertEquals(state.purchases.map((p: { status: string }) => p.status), ["underpaid"]);
    assertEquals(state.purchases[0].shortfall, "33333333");
    const topUp = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/top-up`, {});
    assertEquals(topUp.status, 201);
    const top = await topUp.json();
    assertEquals([top.purchaseId, top.amount, top.reference], [
      quote.purchaseId,
      "33333333",
      quote.reference,
    ]);
    assert(top.expiresAt > w.clock());
    await pay(h, wallet, top);

    const paid =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals([paid.status, paid.receivedLamports], ["paid", "66666667"]);
    const key = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(key.status, 201);
    const { apiKey } = await key.json();
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
    const purchased = (await eventTypes(h)).find((e) => e.type === "AccessPurchased")!;
    assertEquals((purchased.data as { amount: string }).amount, "66666667");
    // The purchase as the projections hold it is what a replay of the log gives.
    const replay = await replayAndCompare(h.kv, allProjections);
    assert(replay.equal, JSON.stringify(replay.mismatches));
  } finally {
    await h.close();
  }
});

Deno.test("given a quote that expired, when a payment lands after the price rose, then it covers the fee and is paid", async () => {
  const w = world();
  w.usd = 150;
  w.offsetMs = -2 * HOUR;
  const h = await startHarness({ clock: w.clock, price: w.price });
  try {
    const wallet = h.fundedWallet();
    const cookie = await h.signIn(wallet);
    const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    w.offsetMs = 0;
    w.usd = 300;
    await pay(h, wallet, quote);
    const check =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals([check.status, check.receivedLamports], ["paid", "66666667"]);
  } finally {
    await h.close();
  }
});

Deno.test("given an expired unpaid quote, when the portal's state is read, then it is no longer listed; a quote in force is", async () => {
  const w = world();
  w.offsetMs = -2 * HOUR;
  const h = await startHarness({ clock: w.clock, price: w.price });
  try {
    const cookie = await h.signIn(h.fundedWallet());
    const old = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    w.offsetMs = 0;
    const fresh = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    const state = await (await h.portal(cookie, "/portal/api/state")).json();
    const ids = state.purchases.map((p: { purchaseId: string }) => p.purchaseId);
    assertEquals(ids, [fresh.purchaseId]);
    assert(!ids.includes(old.purchaseId));
    assertEquals(state.purchases[0].expiresAt, fresh.expiresAt);
    // The expired one still answers a check (a payment landing on it later is still counted).
    const check =
      await (await h.portal(cookie, `/portal/api/purchases/${old.purchaseId}/check`, {})).json();
    assertEquals([check.status, check.expired], ["pending", true]);
  } finally {
    await h.close();
  }
});

Deno.test("QUOTE_TTL_S sets how long a quote is payable", async () => {
  const w = world();
  const h = await startHarness({ clock: w.clock, price: w.price, env: { QUOTE_TTL_S: "30" } });
  try {
    const cookie = await h.signIn(h.fundedWallet());
    const before = w.clock();
    const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    assert(quote.expiresAt >= before + 30_000 && quote.expiresAt <= w.clock() + 30_000);
  } finally {
    await h.close();
  }
});
