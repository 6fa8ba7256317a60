/**
 * In an integrator's app the payer is any end user: the integrator's key builds, the user's wallet
 * signs. A transaction the payer signs that creates nothing (a lamport to our treasury and to
 * themselves, carrying the build's reference and mint read-only) is not the build's creation: it
 * must not settle the build as an unverified creation, nor count toward suspending the
 * integrator's key. Only a real creation without the fee is a fee-less creation.
 */
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
} from "@solana/web3.js";
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { buildBy } from "../../src/creation/build-records.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";

async function build(h: Harness, apiKey: string, payer: Keypair, name: string) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: payer.publicKey.toBase58(),
      name,
      symbol: "USR",
      metadataUri: "https://example.com/m/user.json",
      supply: "1000",
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  const { reference } = (await buildBy(h.kv, "build_by_mint", body.mint))!;
  return { mint: body.mint as string, reference, tx: decodeTx(body.transaction) };
}

/** The payer's own cheap transaction: it creates nothing, and carries the reference and mint. */
async function noise(
  h: Harness,
  payer: Keypair,
  b: { mint: string; reference: string },
  n: number,
) {
  const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
  const fee = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: h.treasury.publicKey,
    lamports: 1 + n,
  });
  fee.keys.push({ pubkey: new PublicKey(b.reference), isSigner: false, isWritable: false });
  const self = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: payer.publicKey,
    lamports: 1,
  });
  self.keys.push({ pubkey: new PublicKey(b.mint), isSigner: false, isWritable: false });
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash })
    .add(fee, self);
  tx.sign(payer);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

Deno.test("a payer's transaction that creates nothing neither settles the build nor suspends the integrator's key", async () => {
  const h = await startHarness({ env: { SUSPEND_AFTER_UNVERIFIED: "3" } });
  try {
    // A fresh treasury holds nothing yet, and a 1-lamport transfer may not create an account.
    h.chain.airdrop(h.treasury.publicKey.toBase58(), 1_000_000_000n);
    const { apiKey } = await h.newApiKey();
    const user = h.fundedWallet(5);
    const builds = [];
    for (let i = 0; i < 4; i++) {
      const b = await build(h, apiKey, user, `User Token ${i}`);
      const sig = await noise(h, user, b, i);
      await sweepOpenBuilds(h.services);
      // Asked about directly, it is not the build's landing either.
      const v = await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) }))
        .json();
      assertEquals([v.status, v.mint], ["unverified", null]);
      builds.push(b);
    }
    for (const b of builds) {
      assertEquals((await buildBy(h.kv, "build_by_mint", b.mint))!.status, "built");
    }
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
    // The user's real creation still confirms the build.
    const real = builds[0];
    real.tx.sign([user]);
    const sig = await h.services.connection.sendRawTransaction(real.tx.serialize());
    await h.waitForConfirmation(sig);
    await sweepOpenBuilds(h.services);
    const done = (await buildBy(h.kv, "build_by_mint", real.mint))!;
    assertEquals([done.status, done.signature, done.feeVerified], ["confirmed", sig, true]);
  } finally {
    await h.close();
  }
});

Deno.test("a payer's creation that mints nothing and pays no fee is still the build's landing: unverified", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const user = h.fundedWallet(5);
    const b = await build(h, apiKey, user, "Bare Mint");
    // The built transaction without the token account, the MintTo and the fee transfer.
    const tx = Transaction.populate(
      TransactionMessage.decompile(b.tx.message).compileToLegacyMessage(),
    );
    const keep = tx.instructions.filter((ix) => {
      if (ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) return false;
      if (ix.programId.equals(TOKEN_PROGRAM_ID)) return ix.data[0] !== 7; // MintTo
      // The fee transfer carries the reference as a third account; the mint's funding has two.
      if (ix.programId.equals(SystemProgram.programId)) {
        return !(ix.data[0] === 2 && ix.keys.length === 3);
      }
      return true;
    });
    const bare = new Transaction({
      feePayer: user.publicKey,
      recentBlockhash: tx.recentBlockhash!,
    }).add(...keep);
    bare.sign(user);
    const sig = await h.services.connection.sendRawTransaction(bare.serialize());
    await h.waitForConfirmation(sig);
    await sweepOpenBuilds(h.services);
    const done = (await buildBy(h.kv, "build_by_mint", b.mint))!;
    assertEquals([done.status, done.signature, done.feeVerified], ["unverified", sig, false]);
  } finally {
    await h.close();
  }
});
