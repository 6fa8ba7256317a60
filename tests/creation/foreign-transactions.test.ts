/**
 * Anyone can put a build's reference key or mint, read-only, into a transaction of their own.
 * On the embedded chain, with nothing but a funded wallet: such transactions landing before,
 * after, failing, or many at once never become a build's outcome, never count toward the key's
 * suspension and never change a record; they are logged and counted. Only the payer's own
 * transaction settles a build, and only the payer's own failure fails it.
 */
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  type VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { buildBy } from "../../src/creation/build-records.ts";
import { findPayerTransaction } from "../../src/creation/chain-reader.ts";
import { recordLifecycle } from "../../src/creation/handle.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { foreignCount } from "../../src/solana/foreign-transactions.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { rpcTxReader } from "../../src/audit/chain-check.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { allEvents } from "../reliability/support.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

interface Built {
  mint: string;
  reference: string;
  tx: VersionedTransaction;
}

async function build(h: Harness, apiKey: string, wallet: Keypair, name: string): Promise<Built> {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: wallet.publicKey.toBase58(),
      name,
      symbol: "VIC",
      metadataUri: "https://example.com/m/victim.json",
      supply: "1000",
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  // Not in the response, but public on chain once the payment lands: read from our record here.
  const { reference } = (await buildBy(h.kv, "build_by_mint", body.mint))!;
  return { mint: body.mint, reference, tx: decodeTx(body.transaction) };
}

/** The payer signs and sends the built transaction; returns its signature once confirmed. */
async function land(h: Harness, b: Built, wallet: Keypair): Promise<string> {
  b.tx.sign([wallet]);
  const sig = await h.services.connection.sendRawTransaction(b.tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

/**
 * The attacker's own transaction: 1 lamport to our treasury in the fee transfer's exact shape
 * [from, treasury, reference], with the build's mint read-only too. `fail` makes it land with an
 * error (a second transfer of more than the attacker has) instead.
 */
async function attack(
  h: Harness,
  attacker: Keypair,
  b: Pick<Built, "mint" | "reference">,
  opts: { fail?: boolean; nonce?: number } = {},
): Promise<string> {
  const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
  const ix = SystemProgram.transfer({
    fromPubkey: attacker.publicKey,
    toPubkey: h.treasury.publicKey,
    lamports: 1 + (opts.nonce ?? 0),
  });
  ix.keys.push({ pubkey: new PublicKey(b.reference), isSigner: false, isWritable: false });
  const tx = new Transaction({ feePayer: attacker.publicKey, recentBlockhash: blockhash }).add(ix);
  const mintIx = SystemProgram.transfer({
    fromPubkey: attacker.publicKey,
    toPubkey: attacker.publicKey,
    lamports: opts.fail ? 1_000_000 * 1_000_000_000 : 1,
  });
  mintIx.keys.push({ pubkey: new PublicKey(b.mint), isSigner: false, isWritable: false });
  tx.add(mintIx);
  tx.sign(attacker);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize(), {
    skipPreflight: true,
  });
  const status = await waitLanded(h, sig);
  assertEquals(status.failed, opts.fail === true, `attacker transaction ${sig}`);
  return sig;
}

/** `n` foreign transactions sent at once, then waited for. */
async function attackMany(
  h: Harness,
  attacker: Keypair,
  b: Pick<Built, "mint" | "reference">,
  n: number,
  fail = false,
): Promise<string[]> {
  const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
  const sigs: string[] = [];
  for (let i = 0; i < n; i++) {
    const ix = SystemProgram.transfer({
      fromPubkey: attacker.publicKey,
      toPubkey: h.treasury.publicKey,
      lamports: fail ? 1_000_000 * 1_000_000_000 + i : 1 + i,
    });
    ix.keys.push({ pubkey: new PublicKey(b.reference), isSigner: false, isWritable: false });
    const tx = new Transaction({ feePayer: attacker.publicKey, recentBlockhash: blockhash }).add(
      ix,
    );
    tx.sign(attacker);
    sigs.push(
      await h.services.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true }),
    );
  }
  for (const sig of sigs) assertEquals((await waitLanded(h, sig)).failed, fail, sig);
  return sigs;
}

async function waitLanded(h: Harness, sig: string): Promise<{ failed: boolean }> {
  for (let i = 0; i < 400; i++) {
    const s = (await h.services.connection.getSignatureStatuses([sig])).value[0];
    if (s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized") {
      return { failed: s.err !== null };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`transaction ${sig} did not land`);
}

async function record(h: Harness, apiKey: string, mint: string) {
  return await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
}

async function verify(h: Harness, apiKey: string, sig: string) {
  const res = await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) });
  assertEquals(res.status, 200);
  return await res.json();
}

const outcomeTypes = ["CreationConfirmed", "CreationUnverified", "CreationFailed", "KeySuspended"];
async function outcomes(h: Harness) {
  return (await allEvents(h.kv)).filter((e) => outcomeTypes.includes(e.type)).map((e) => e.type);
}

Deno.test("foreign transactions landing after the payer's, four builds in a row: confirmed with the payer's signature, the key not suspended, the audit clean", async () => {
  const h = await startHarness({ env: { SUSPEND_AFTER_UNVERIFIED: "3" } });
  const scratch = await Deno.openKv(":memory:");
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(5);
    const foreign: string[] = [];
    const payers: string[] = [];
    const mints: string[] = [];
    for (let i = 0; i < 4; i++) {
      const b = await build(h, apiKey, wallet, `Victim ${i}`);
      payers.push(await land(h, b, wallet));
      foreign.push(await attack(h, attacker, b, { nonce: i }));
      mints.push(b.mint);
      await sweepOpenBuilds(h.services);
    }
    // The watcher saw each (they pay the treasury 1 lamport) and counted each once.
    assertEquals(await foreignCount(h.kv), 4);
    for (let i = 0; i < 4; i++) {
      const r = await record(h, apiKey, mints[i]);
      assertEquals([r.status, r.signature, r.feeVerified], ["confirmed", payers[i], true]);
      const v = await verify(h, apiKey, payers[i]);
      assertEquals([v.status, v.feeVerified], ["confirmed", true]);
      assert(BigInt(v.fee.amount) > 0n);
      // Asking about the attacker's transaction changes nothing either.
      const f = await verify(h, apiKey, foreign[i]);
      assertEquals([f.status, f.feeVerified, f.mint], ["unverified", false, null]);
    }
    assertEquals(await outcomes(h), Array(4).fill("CreationConfirmed"));
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
    assertEquals(await foreignCount(h.kv), 4, "each foreign transaction counted once");
    assert(
      h.logs.some((l) => l.includes("not signed by the payer") && l.includes(foreign[0])),
      "the foreign transaction is logged",
    );

    const sink = new MemorySink();
    const summary = await runAudit({
      kv: h.kv,
      scratch,
      sink,
      readTx: rpcTxReader(h.services.connection),
    });
    assertEquals(sink.rows("exceptions"), []);
    assertEquals(summary.verifiedOnChain, 4);
    assertEquals(sink.rows("builds").map((b) => b.signature).sort(), [...payers].sort());
  } finally {
    scratch.close();
    await h.close();
  }
});

Deno.test("a foreign transaction landing before the payer's, and a failing one, leave the build open; the payer's landing confirms it", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(5);
    const b = await build(h, apiKey, wallet, "Early Bird");
    const early = await attack(h, attacker, b);
    const failing = await attack(h, attacker, b, { fail: true, nonce: 1 });
    await sweepOpenBuilds(h.services);
    const open = await record(h, apiKey, b.mint);
    assertEquals([open.status, open.signature], ["built", null]);
    assertEquals(await outcomes(h), []);
    for (const sig of [early, failing]) {
      const v = await verify(h, apiKey, sig);
      assertEquals([v.status, v.mint], ["unverified", null]);
    }
    assertEquals((await record(h, apiKey, b.mint)).status, "built", "verify changed nothing");

    const sig = await land(h, b, wallet);
    await sweepOpenBuilds(h.services);
    const r = await record(h, apiKey, b.mint);
    assertEquals([r.status, r.signature, r.feeVerified], ["confirmed", sig, true]);
    assertEquals(await foreignCount(h.kv), 2);
  } finally {
    await h.close();
  }
});

Deno.test("a relayed build keeps the relay's signature when a foreign transaction carrying its reference lands", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(5);
    const b = await build(h, apiKey, wallet, "Relayed");
    b.tx.sign([wallet]);
    const res = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: { transaction: b64(b.tx.serialize()) },
    });
    assertEquals(res.status, 202);
    const relayed = (await res.json()).signature;
    assertEquals(relayed, bs58.encode(b.tx.signatures[0]));
    await h.waitForConfirmation(relayed);
    await attack(h, attacker, b);
    await sweepOpenBuilds(h.services);
    const r = await record(h, apiKey, b.mint);
    assertEquals([r.status, r.signature, r.feeVerified], ["confirmed", relayed, true]);
    const submitted = (await allEvents(h.kv)).filter((e) => e.type === "TransactionSubmitted");
    assertEquals(submitted.map((e) => (e.data as { signature: string }).signature), [relayed]);
  } finally {
    await h.close();
  }
});

Deno.test("the payer's own failed transaction fails the build", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const b = await build(h, apiKey, wallet, "Broke");
    // The payer keeps the network fee but not the rent the creation needs.
    const c = h.services.connection;
    const balance = await c.getBalance(wallet.publicKey, "confirmed");
    const { blockhash } = await c.getLatestBlockhash("confirmed");
    const drain = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({
        fromPubkey: wallet.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: balance - 1_000_000,
      }),
    );
    drain.sign(wallet);
    await h.waitForConfirmation(await c.sendRawTransaction(drain.serialize()));
    b.tx.sign([wallet]);
    const sig = await c.sendRawTransaction(b.tx.serialize(), { skipPreflight: true });
    assertEquals((await waitLanded(h, sig)).failed, true);
    await sweepOpenBuilds(h.services);
    // Another version could still succeed until the blockhash expires (failed-variant.test.ts).
    assertEquals((await record(h, apiKey, b.mint)).status, "built");
    const { lastValidBlockHeight } = await h.services.connection.getLatestBlockhash("confirmed");
    h.chain.advanceSlots(lastValidBlockHeight - h.chain.blockHeight() + 40);
    await sweepOpenBuilds(h.services, { full: true });
    const r = await record(h, apiKey, b.mint);
    assertEquals([r.status, r.signature], ["failed", sig]);
    assertEquals(await foreignCount(h.kv), 0);
  } finally {
    await h.close();
  }
});

Deno.test("25 foreign transactions after the payer's, and 25 failing ones, cannot push it out of sight: both builds confirm", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(5);
    const plain = await build(h, apiKey, wallet, "Buried");
    const failing = await build(h, apiKey, wallet, "Buried Failing");
    const sigPlain = await land(h, plain, wallet);
    const sigFailing = await land(h, failing, wallet);
    await attackMany(h, attacker, plain, 25);
    await attackMany(h, attacker, failing, 25, true);
    await sweepOpenBuilds(h.services);
    for (const [b, sig] of [[plain, sigPlain], [failing, sigFailing]] as const) {
      const r = await record(h, apiKey, b.mint);
      assertEquals([r.status, r.signature, r.feeVerified], ["confirmed", sig, true], b.mint);
    }
    assertEquals(await outcomes(h), ["CreationConfirmed", "CreationConfirmed"]);
  } finally {
    await h.close();
  }
});

Deno.test("a lookup that reaches its page bound says so, logs it, and gives no answer", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(5);
    const b = await build(h, apiKey, wallet, "Bounded");
    await land(h, b, wallet);
    await attackMany(h, attacker, b, 12);
    const { payer } = (await buildBy(h.kv, "build_by_mint", b.mint))!;
    const bounded = await findPayerTransaction(h.services, b.reference, payer, { buildId: 1 }, {
      pageSize: 5,
      maxPages: 2,
    });
    assertEquals([bounded.found, bounded.uncertain], [null, true]);
    assert(h.logs.some((l) => l.includes("stopped at its page bound")));
    const full = await findPayerTransaction(h.services, b.reference, payer, {}, { pageSize: 5 });
    assertEquals(full.found?.signature, bs58.encode(b.tx.signatures[0]));
  } finally {
    await h.close();
  }
});

/** The portal's purchase flow up to a landed payment; the check comes after the attack. */
async function payForAccess(h: Harness, wallet: Keypair) {
  const cookie = await h.signIn(wallet);
  const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" })).json();
  const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
  tx.partialSign(wallet);
  return { cookie, quote, tx };
}

async function check(h: Harness, cookie: string, purchaseId: string) {
  return await (await h.portal(cookie, `/portal/api/purchases/${purchaseId}/check`, {})).json();
}

Deno.test("purchases: foreign transactions before, failing, and 25 after the payment: paid with the wallet's signature, and a key is issued", async () => {
  const h = await startHarness();
  try {
    const attacker = h.fundedWallet(5);
    const wallet = h.fundedWallet(5);
    // A fresh treasury holds nothing yet, and a 1-lamport transfer may not create an account.
    h.chain.airdrop(h.treasury.publicKey.toBase58(), 1_000_000_000n);
    const { cookie, quote, tx } = await payForAccess(h, wallet);
    const target = { reference: quote.reference, mint: quote.reference };
    await attackMany(h, attacker, target, 2);
    await attackMany(h, attacker, target, 2, true);
    assertEquals((await check(h, cookie, quote.purchaseId)).status, "pending");
    const paid = await h.services.connection.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(paid);
    await attackMany(h, attacker, target, 25);
    const done = await check(h, cookie, quote.purchaseId);
    assertEquals([done.status, done.signature], ["paid", paid]);
    const key = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(key.status, 201);
    // Read oldest first: the two that landed before were read (and counted) on the first check,
    // skipped unread on the second; the failing ones and those after the payment never read.
    assertEquals(await foreignCount(h.kv), 2);
  } finally {
    await h.close();
  }
});

Deno.test("audit --verify-chain flags a build recorded under someone else's transaction (as an earlier version recorded them)", async () => {
  const h = await startHarness();
  const scratch = await Deno.openKv(":memory:");
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(5);
    const b = await build(h, apiKey, wallet, "Recorded Wrong");
    await land(h, b, wallet);
    const foreign = await attack(h, attacker, b);
    // What the watcher used to do: take the newest transaction carrying the reference.
    const { buildId } = (await buildBy(h.kv, "build_by_mint", b.mint))!;
    await recordLifecycle(h.services, buildId, {
      type: "RecordLanding",
      signature: foreign,
      slot: 1,
      blockTime: null,
      assessment: {
        status: "unverified",
        // Its 1-lamport transfer carried the reference in the fee transfer's shape.
        feeLamportsSeen: 1n,
        supplyRawSeen: 0n,
        problems: ["service fee 1 lamports is below the quoted fee"],
      },
    });
    const sink = new MemorySink();
    await runAudit({ kv: h.kv, scratch, sink, readTx: rpcTxReader(h.services.connection) });
    const checks = sink.rows("exceptions").filter((r) => r.kind === "chain_check");
    assertEquals(
      checks.map((r) => [r.signature, r.detail]),
      [[
        foreign,
        `not signed by the build's payer ${wallet.publicKey.toBase58()}: another party's transaction`,
      ]],
    );
  } finally {
    scratch.close();
    await h.close();
  }
});
