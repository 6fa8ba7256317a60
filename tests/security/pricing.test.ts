/** The pricing of landed access payments, case by case (the chain flows are in stale-quote). */
import { assertEquals } from "../support/assert.ts";
import { atPrice, pricePayment } from "../../src/domain/access/pricing.ts";

const quote = { amount: "33333334", solUsd: 300, quotedAt: 0, expiresAt: 600_000 };
const base = {
  currency: "SOL" as const,
  quote,
  owed: { amount: 33_333_334n, solUsd: 300 },
  feeUsd: 10,
  nothingPaid: true,
  currentSolUsd: 150,
  decimals: 6,
};

Deno.test("within the validity a payment counts at the quote's amount, whatever the price now", () => {
  assertEquals(pricePayment({ ...base, received: 33_333_334n, blockTime: 600 }), {
    late: false,
    solUsd: 300,
    shortfall: 0n,
  });
  // Short within the validity: short at the quote's price.
  assertEquals(pricePayment({ ...base, received: 33_333_300n, blockTime: 599 }).shortfall, 34n);
});

Deno.test("after the validity (or with no block time) a payment is priced at the current price", () => {
  for (const blockTime of [601, null]) {
    assertEquals(pricePayment({ ...base, received: 33_333_334n, blockTime }), {
      late: true,
      solUsd: 150,
      shortfall: 33_333_333n,
    });
  }
});

Deno.test("a late top-up is repriced from what is owed, not from the fee", () => {
  const owed = { amount: 33_333_333n, solUsd: 150 };
  const topUp = { amount: "33333333", solUsd: 150, quotedAt: 0, expiresAt: 600_000 };
  const late = { ...base, quote: topUp, owed, nothingPaid: false, currentSolUsd: 100 };
  // $5 at $100/SOL is 50,000,000 lamports (rounded up from 49,999,999.5).
  assertEquals(atPrice(owed, 100), 50_000_000n);
  assertEquals(pricePayment({ ...late, received: 50_000_000n, blockTime: 700 }).shortfall, 0n);
  assertEquals(
    pricePayment({ ...late, received: 33_333_333n, blockTime: 700 }).shortfall,
    16_666_667n,
  );
  assertEquals(pricePayment({ ...late, received: 33_333_333n, blockTime: 500 }).shortfall, 0n);
});

Deno.test("stablecoin payments are not repriced", () => {
  const q = { amount: "10000000", solUsd: null, quotedAt: 0, expiresAt: 600_000 };
  const r = pricePayment({
    ...base,
    currency: "STABLECOIN",
    quote: q,
    owed: { amount: 10_000_000n, solUsd: null },
    received: 9_000_000n,
    blockTime: 10_000,
    currentSolUsd: null,
  });
  assertEquals(r, { late: true, solUsd: null, shortfall: 1_000_000n });
});
