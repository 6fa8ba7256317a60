/**
 * Which transfers pay for an access purchase: only the wallet's transfer to the treasury with
 * exactly the accounts the portal built, this purchase's reference last. One transfer never pays
 * for two things.
 */
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { assertEquals } from "../support/assert.ts";
import {
  paidTo,
  type PaymentInstruction,
  paymentInstructions,
  type PaymentRequest,
} from "../../src/domain/access/payment.ts";
import { stablecoinUnits } from "../../src/domain/access/pricing.ts";

const key = () => Keypair.generate().publicKey;
const sol: PaymentRequest = {
  wallet: key(),
  treasury: key(),
  currency: "SOL",
  amount: 1_000n,
  reference: key(),
};
const mint = key();
const usdc: PaymentRequest = {
  ...sol,
  currency: "STABLECOIN",
  stablecoin: { mint, decimals: 6 },
};

/** The portal's own instructions, as a landed transaction shows them. */
const asLanded = (r: PaymentRequest, edit: (keys: PublicKey[]) => PublicKey[] = (k) => k) =>
  paymentInstructions(r).map((ix): PaymentInstruction => ({
    program: ix.programId,
    accounts: edit(ix.keys.map((k) => k.pubkey)),
    data: new Uint8Array(ix.data),
  }));

Deno.test("the portal's own SOL and stablecoin transfers pay their amount", () => {
  assertEquals(paidTo(asLanded(sol), sol), 1_000n);
  assertEquals(paidTo(asLanded(usdc), usdc), 1_000n);
  // Paid twice in one transaction: counted twice, as the treasury received it twice.
  assertEquals(paidTo([...asLanded(sol), ...asLanded(sol)], sol), 2_000n);
});

Deno.test("a transfer carrying a second reference, or not as built, pays nothing", () => {
  const other = key();
  for (const r of [sol, usdc]) {
    const cases: [string, PaymentInstruction[]][] = [
      ["a second reference after", asLanded(r, (k) => [...k, other])],
      ["a second reference before", asLanded(r, (k) => [...k.slice(0, -1), other, k.at(-1)!])],
      ["another purchase's reference", asLanded({ ...r, reference: other })],
      ["another wallet's transfer", asLanded({ ...r, wallet: key() })],
      ["to another treasury", asLanded({ ...r, treasury: key() })],
    ];
    for (const [name, ixs] of cases) assertEquals(paidTo(ixs, r), 0n, `${r.currency}: ${name}`);
  }
  // The stablecoin transfer must be of the configured mint at its decimals.
  const otherMint = { ...usdc, stablecoin: { mint: key(), decimals: 6 } };
  assertEquals(paidTo(asLanded(otherMint), usdc), 0n);
  const wrongDecimals = { ...usdc, stablecoin: { mint, decimals: 9 } };
  assertEquals(paidTo(asLanded(wrongDecimals), usdc), 0n);
});

Deno.test("two purchases paid by two transfers in one transaction: each gets its own", () => {
  const second = { ...sol, reference: key(), amount: 500n };
  const both = [...asLanded(sol), ...asLanded(second)];
  assertEquals([paidTo(both, sol), paidTo(both, second)], [1_000n, 500n]);
  // A plain transfer with no reference pays for nothing either.
  const plain = SystemProgram.transfer({
    fromPubkey: sol.wallet,
    toPubkey: sol.treasury,
    lamports: 5_000,
  });
  const bare = [{
    program: plain.programId,
    accounts: plain.keys.map((k) => k.pubkey),
    data: new Uint8Array(plain.data),
  }];
  assertEquals(paidTo(bare, sol), 0n);
});

Deno.test("a stablecoin amount is rounded up, never below the fee", () => {
  assertEquals(stablecoinUnits(10, 6), 10_000_000n);
  assertEquals(stablecoinUnits(9.995, 2), 1000n); // Math.round gave 999 for 9.995 * 100
  assertEquals(stablecoinUnits(2.99, 0), 3n);
  assertEquals(stablecoinUnits(0.000001, 6), 1n);
});
