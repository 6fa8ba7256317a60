/**
 * Builds on a durable nonce (`nonceAccount`), on the embedded chain: the message uses the nonce
 * account's stored nonce and begins with AdvanceNonceAccount, the payer is still the only signer,
 * the response says it does not expire, and signed long after any blockhash's window it lands,
 * is verified and costs exactly `costs`. A nonce account that is missing, not a nonce,
 * uninitialized or another's is a 400 on nonceAccount. The watcher keeps it open past every
 * height and expires it, with its reason, once its nonce moves on without it; it reads the nonce
 * accounts in its mint batches (no call of their own). Refresh refuses a nonce build.
 */
import {
  ComputeBudgetProgram,
  type Connection,
  Keypair,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  PublicKey,
  SystemProgram,
  Transaction,
  type VersionedTransaction,
} from "@solana/web3.js";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { buildBy } from "../../src/creation/build-records.ts";
import { outcomePayload } from "../../src/webhooks/decide.ts";
import { TokenBuilt } from "../../src/tokens/build-response.ts";
import { countingFetch } from "../support/counting-fetch.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { rpcTxReader } from "../../src/audit/chain-check.ts";
import { MemorySink } from "../../src/audit/sink.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function withHarness(
  fn: (
    h: Harness,
    k: { apiKey: string; wallet: Keypair; jump: (ms: number) => void },
  ) => Promise<void>,
  rpcFetch?: typeof fetch,
) {
  let offset = 0;
  const clock = () => Date.now() + offset;
  // Slots move only when told, so the blockhash window is passed on purpose.
  const h = await startHarness({ chain: { slotMs: "manual", now: clock }, clock, rpcFetch });
  try {
    await fn(h, { ...await h.newApiKey(), jump: (ms) => (offset += ms) });
  } finally {
    await h.close();
  }
}

/** A nonce account of `authority`, paid by `payer`; usable from the next slot. */
async function createNonce(
  h: Harness,
  payer: Keypair,
  authority: PublicKey = payer.publicKey,
): Promise<PublicKey> {
  const c = h.services.connection;
  const nonce = Keypair.generate();
  const tx = new Transaction({
    feePayer: payer.publicKey,
    ...(await c.getLatestBlockhash("confirmed")),
  }).add(
    ...SystemProgram.createNonceAccount({
      fromPubkey: payer.publicKey,
      noncePubkey: nonce.publicKey,
      authorizedPubkey: authority,
      lamports: await c.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH),
    }).instructions,
  );
  tx.sign(payer, nonce);
  await h.waitForConfirmation(await c.sendRawTransaction(tx.serialize()));
  h.chain.advanceSlots(1);
  return nonce.publicKey;
}

async function storedNonce(c: Connection, nonce: PublicKey): Promise<string> {
  const info = await c.getAccountInfo(nonce, "confirmed");
  return NonceAccount.fromAccountData(info!.data).nonce;
}

async function build(
  h: Harness,
  apiKey: string,
  wallet: Keypair,
  extra: Record<string, unknown>,
) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: wallet.publicKey.toBase58(),
      name: "Slow Signer",
      symbol: "NONCE",
      metadataUri: "https://example.com/m/nonce.json",
      supply: "1000",
      decimals: 2,
      ...extra,
    },
  });
  return { status: res.status, body: await res.json() };
}

async function relay(h: Harness, apiKey: string, tx: VersionedTransaction) {
  const res = await h.request("/v1/transactions", {
    method: "POST",
    headers: bearer(apiKey),
    json: { transaction: b64(tx.serialize()) },
  });
  return { status: res.status, body: await res.json() };
}

async function record(h: Harness, apiKey: string, mint: string) {
  return await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
}

/** The audit over what the service wrote: the projections rebuild, no exception; its build rows. */
async function audited(h: Harness) {
  const scratch = await Deno.openKv(":memory:");
  try {
    const sink = new MemorySink();
    const summary = await runAudit({
      kv: h.kv,
      scratch,
      sink,
      readTx: rpcTxReader(h.services.connection),
    });
    assertEquals(sink.rows("exceptions"), []);
    assert(summary.ok, JSON.stringify(summary));
    return sink.rows("builds");
  } finally {
    scratch.close();
  }
}

/** The message's instructions as program and data: what the contract's order says. */
function layout(tx: VersionedTransaction) {
  const m = tx.message;
  return m.compiledInstructions.map((ix) => ({
    program: m.staticAccountKeys[ix.programIdIndex].toBase58(),
    accounts: ix.accountKeyIndexes.map((i) => m.staticAccountKeys[i].toBase58()),
    data: [...ix.data],
  }));
}

for (const tokenProgram of ["spl-token", "token-2022"] as const) {
  Deno.test(`${tokenProgram} on a durable nonce: does not expire, lands signed after the blockhash window, verified, costs exact`, async () => {
    await withHarness(async (h, { apiKey, wallet }) => {
      const c = h.services.connection;
      const nonce = await createNonce(h, wallet);
      const value = await storedNonce(c, nonce);
      const extra = tokenProgram === "token-2022" ? { tokenProgram } : {};
      const built = await build(h, apiKey, wallet, { ...extra, nonceAccount: nonce.toBase58() });
      assertEquals(built.status, 201, JSON.stringify(built.body));
      TokenBuilt.parse(built.body);
      assertEquals(
        [
          built.body.recentBlockhash,
          built.body.lastValidBlockHeight,
          built.body.expiresInSeconds,
          built.body.nonceAccount,
        ],
        [value, null, null, nonce.toBase58()],
      );
      const tx = decodeTx(built.body.transaction);
      assertEquals(tx.message.recentBlockhash, value);
      // The payer is the only signer, and the nonce's authority.
      assertEquals(tx.message.header.numRequiredSignatures, 1);
      assertEquals(tx.message.staticAccountKeys[0].toBase58(), wallet.publicKey.toBase58());
      const ixs = layout(tx);
      assertEquals(ixs[0], {
        program: SystemProgram.programId.toBase58(),
        accounts: [
          nonce.toBase58(),
          "SysvarRecentB1ockHashes11111111111111111111",
          wallet.publicKey.toBase58(),
        ],
        data: [4, 0, 0, 0],
      });
      // Then the compute budget, then the creation as without a nonce.
      assertEquals(ixs.slice(1, 3).map((ix) => [ix.program, ix.data[0]]), [
        [ComputeBudgetProgram.programId.toBase58(), 2],
        [ComputeBudgetProgram.programId.toBase58(), 3],
      ]);
      const rec = await record(h, apiKey, built.body.mint);
      assertEquals([rec.status, rec.nonceAccount], ["built", nonce.toBase58()]);

      // Long past any blockhash of its time: still open.
      h.chain.advanceSlots(400);
      await sweepOpenBuilds(h.services);
      assertEquals((await record(h, apiKey, built.body.mint)).status, "built");

      const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
      tx.sign([wallet]);
      const sent = await relay(h, apiKey, tx);
      assertEquals(sent.status, 202, JSON.stringify(sent.body));
      await h.waitForConfirmation(sent.body.signature);
      const spent = before - BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
      assertEquals(spent, BigInt(built.body.costs.totalLamports));
      assertEquals(built.body.costs.networkFeeLamports, "5000");

      const v = await (await h.request(`/v1/transactions/${sent.body.signature}`, {
        headers: bearer(apiKey),
      })).json();
      assertEquals([v.status, v.feeVerified, v.mint], ["confirmed", true, built.body.mint]);
      // Replay rebuilds every projection exactly, and the audit finds nothing to report.
      const rows = await audited(h);
      assertEquals(rows.find((b) => b.mint === built.body.mint)?.status, "confirmed");
      // It moved the nonce on itself: the build is confirmed, not expired.
      assert((await storedNonce(c, nonce)) !== value);
      await sweepOpenBuilds(h.services);
      assertEquals((await record(h, apiKey, built.body.mint)).status, "confirmed");
    });
  });
}

Deno.test("nonceAccount: missing, not a nonce, uninitialized, another's authority: each a 400 naming it", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const c = h.services.connection;
    const other = Keypair.generate();
    const othersNonce = await createNonce(h, wallet, other.publicKey);
    // A System account of a nonce's size that was never initialized.
    const blank = Keypair.generate();
    const tx = new Transaction({
      feePayer: wallet.publicKey,
      ...(await c.getLatestBlockhash("confirmed")),
    }).add(SystemProgram.createAccount({
      fromPubkey: wallet.publicKey,
      newAccountPubkey: blank.publicKey,
      lamports: await c.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH),
      space: NONCE_ACCOUNT_LENGTH,
      programId: SystemProgram.programId,
    }));
    tx.sign(wallet, blank);
    await h.waitForConfirmation(await c.sendRawTransaction(tx.serialize()));

    const cases: [string, RegExp][] = [
      [Keypair.generate().publicKey.toBase58(), /no account exists at this address/],
      [wallet.publicKey.toBase58(), /not a nonce account: it holds 0 bytes/],
      [h.chain.pythSolUsdAccount, /not a nonce account: it is owned by /],
      [blank.publicKey.toBase58(), /not an initialized nonce account/],
      [
        othersNonce.toBase58(),
        new RegExp(`authority is ${other.publicKey.toBase58()}, not the payer`),
      ],
      ["not-an-address", /base58/],
    ];
    for (const [nonceAccount, message] of cases) {
      const r = await build(h, apiKey, wallet, { nonceAccount });
      assertEquals([r.status, r.body.error.code], [400, "invalid_request"], nonceAccount);
      assertMatch(r.body.error.fields.nonceAccount, message);
    }
    // Nothing was built or counted.
    const list = await (await h.request("/v1/tokens", { headers: bearer(apiKey) })).json();
    assertEquals(list.items, []);
  });
});

Deno.test("a nonce build whose nonce moves on without it: expired with the reason; refresh refuses it", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const c = h.services.connection;
    const nonce = await createNonce(h, wallet);
    const built = await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    const mint = built.body.mint;

    const pending = await h.request(`/v1/tokens/${mint}/refresh`, {
      method: "POST",
      headers: bearer(apiKey),
    });
    const p = await pending.json();
    assertEquals([pending.status, p.error.code], [400, "invalid_request"]);
    assertMatch(p.error.fields.mint, /durable nonce and does not expire/);

    // The payer spends the nonce on something else.
    const value = await storedNonce(c, nonce);
    const spend = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: value }).add(
      SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: wallet.publicKey }),
    );
    spend.sign(wallet);
    await h.waitForConfirmation(await c.sendRawTransaction(spend.serialize()));
    const now = await storedNonce(c, nonce);

    await sweepOpenBuilds(h.services);
    assertEquals((await record(h, apiKey, mint)).status, "expired");
    // The reason is the record's problem, which the token.expired webhook carries.
    const doc = (await buildBy(h.kv, "build_by_mint", mint))!;
    assertEquals(doc.problems.length, 1);
    assertMatch(doc.problems[0], new RegExp(`nonce moved on \\(now ${now}\\)`));
    const expired = (await h.services.store.readStream(`build-${doc.buildId}`))
      .find((e) => e.type === "BuildExpired");
    assertEquals(expired?.type === "BuildExpired" && expired.data.reason, doc.problems[0]);
    const hook = JSON.parse(outcomePayload("token.expired", doc, Date.now()));
    assertEquals([hook.data.status, hook.data.problems], ["expired", doc.problems]);

    // Its transaction can no longer land: the relay passes the network's refusal on.
    const tx = decodeTx(built.body.transaction);
    tx.sign([wallet]);
    const sent = await relay(h, apiKey, tx);
    assertEquals(sent.status, 400, JSON.stringify(sent.body));
    const late = await h.request(`/v1/tokens/${mint}/refresh`, {
      method: "POST",
      headers: bearer(apiKey),
    });
    assertMatch((await late.json()).error.fields.mint, /nonce moved on without it/);
  });
});

Deno.test("RPC cost: a nonce build costs the calls of any build; the watcher reads its nonce in the mint batch", async () => {
  const rpc = countingFetch();
  await withHarness(async (h, { apiKey, wallet }) => {
    const nonce = await createNonce(h, wallet);
    // The rent and price are read once per connection: a first build pays for them.
    assertEquals((await build(h, apiKey, wallet, {})).status, 201);
    rpc.take();
    assertEquals((await build(h, apiKey, wallet, { name: "Plain Two" })).status, 201);
    const plain = rpc.take();
    // The build's one round trip: the accounts (the nonce account among them), the fee market,
    // the simulation.
    assertEquals(plain, {
      getMultipleAccounts: 1,
      getRecentPrioritizationFees: 1,
      simulateTransaction: 1,
    });
    const built = await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    assertEquals(rpc.take(), plain);

    await sweepOpenBuilds(h.services);
    rpc.take();
    // Three open builds, one on a nonce: one listing, one height, one batch of 4 accounts.
    await sweepOpenBuilds(h.services);
    assertEquals(rpc.take(), {
      getSignaturesForAddress: 1,
      getBlockHeight: 1,
      getMultipleAccounts: 1,
    });
    h.chain.advanceSlots(400);
    // Past the plain builds' window they are settled; the nonce build, still valid, costs nothing more.
    await sweepOpenBuilds(h.services);
    rpc.take();
    await sweepOpenBuilds(h.services);
    assertEquals(rpc.take(), {
      getSignaturesForAddress: 1,
      getBlockHeight: 1,
      getMultipleAccounts: 1,
    });
    assertEquals((await record(h, apiKey, built.body.mint)).status, "built");
  }, rpc.fetchFn);
});

Deno.test("a nonce set in the current block: a 400 on nonceAccount saying to try again, not a failed simulation", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const c = h.services.connection;
    const nonce = await createNonce(h, wallet);
    const spend = new Transaction({
      feePayer: wallet.publicKey,
      recentBlockhash: await storedNonce(c, nonce),
    }).add(SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: wallet.publicKey }));
    spend.sign(wallet);
    // Landed in the current slot, which does not move (manual slots).
    await c.sendRawTransaction(spend.serialize());
    const r = await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() });
    assertEquals([r.status, r.body.error?.code], [400, "invalid_request"], JSON.stringify(r.body));
    assertMatch(r.body.error.fields.nonceAccount, /set in the current block.*try again/);
    h.chain.advanceSlots(1);
    assertEquals((await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() })).status, 201);
  });
});

Deno.test("token-2022 with every option, the longest fields and a durable nonce: over 1232 bytes is a 400 naming nonceAccount", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const nonce = await createNonce(h, wallet);
    const r = await build(h, apiKey, wallet, {
      nonceAccount: nonce.toBase58(),
      recipient: Keypair.generate().publicKey.toBase58(),
      name: "€".repeat(10) + "Zq",
      symbol: "SYMBOLXYZW",
      metadataUri: "https://example.com/" + "u".repeat(180),
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 10_000, maximum: "18446744073709551615" },
      immutableMetadata: true,
      revokeMint: true,
      revokeFreeze: false,
    });
    assertEquals([r.status, r.body.error.code], [400, "invalid_request"], JSON.stringify(r.body));
    assertMatch(r.body.error.fields.nonceAccount, /would be \d+ bytes, over the 1232/);
    // A shorter uri fits, and is built.
    const short = await build(h, apiKey, wallet, {
      nonceAccount: nonce.toBase58(),
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 10_000, maximum: "18446744073709551615" },
    });
    assertEquals(short.status, 201, JSON.stringify(short.body));
    const wire = Uint8Array.from(atob(short.body.transaction), (ch) => ch.charCodeAt(0));
    assert(wire.length <= 1232, `${wire.length} bytes`);
  });
});

Deno.test("the relay takes a nonce build's message hours later, while it is open", async () => {
  await withHarness(async (h, { apiKey, wallet, jump }) => {
    const nonce = await createNonce(h, wallet);
    const built = await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    // A plain build of the same time is refused by then.
    const plain = await build(h, apiKey, wallet, { name: "Plain Build" });
    jump(3 * 3600_000);
    h.chain.advanceSlots(1000);
    const old = decodeTx(plain.body.transaction);
    old.sign([wallet]);
    const refused = await relay(h, apiKey, old);
    assertMatch(refused.body.error.fields.transaction, /older than one hour/);

    const tx = decodeTx(built.body.transaction);
    tx.sign([wallet]);
    const sent = await relay(h, apiKey, tx);
    assertEquals(sent.status, 202, JSON.stringify(sent.body));
    await h.waitForConfirmation(sent.body.signature);
    await sweepOpenBuilds(h.services);
    assertEquals((await record(h, apiKey, built.body.mint)).status, "confirmed");
  });
});

Deno.test("a nonce build's own transaction landing with an error: the nonce moved with it, so the build fails", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const c = h.services.connection;
    const nonce = await createNonce(h, wallet);
    const built = await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    // The payer spends what the build needs before signing it.
    const balance = await c.getBalance(wallet.publicKey, "confirmed");
    const drain = new Transaction({
      feePayer: wallet.publicKey,
      ...(await c.getLatestBlockhash("confirmed")),
    }).add(SystemProgram.transfer({
      fromPubkey: wallet.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: balance - 5000 - Number(built.body.costs.serviceFeeLamports),
    }));
    drain.sign(wallet);
    await h.waitForConfirmation(await c.sendRawTransaction(drain.serialize()));
    const value = await storedNonce(c, nonce);

    const tx = decodeTx(built.body.transaction);
    tx.sign([wallet]);
    const signature = await c.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    h.chain.advanceSlots(2);
    const landed = await c.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assert(landed?.meta?.err, "landed with an error");
    assert((await storedNonce(c, nonce)) !== value, "the failed transaction advanced the nonce");

    await sweepOpenBuilds(h.services);
    const rec = await record(h, apiKey, built.body.mint);
    assertEquals([rec.status, rec.signature], ["failed", signature]);
  });
});

Deno.test("a nonce handed to another authority: the payer's message can no longer land, so the build expires", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const c = h.services.connection;
    const nonce = await createNonce(h, wallet);
    const built = await build(h, apiKey, wallet, { nonceAccount: nonce.toBase58() });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    const value = await storedNonce(c, nonce);
    const other = Keypair.generate().publicKey;
    const hand = new Transaction({
      feePayer: wallet.publicKey,
      ...(await c.getLatestBlockhash("confirmed")),
    }).add(SystemProgram.nonceAuthorize({
      noncePubkey: nonce,
      authorizedPubkey: wallet.publicKey,
      newAuthorizedPubkey: other,
    }));
    hand.sign(wallet);
    await h.waitForConfirmation(await c.sendRawTransaction(hand.serialize()));
    // The nonce itself did not move: only its authority.
    assertEquals(await storedNonce(c, nonce), value);

    await sweepOpenBuilds(h.services);
    const doc = (await buildBy(h.kv, "build_by_mint", built.body.mint))!;
    assertEquals(doc.status, "expired");
    assertMatch(doc.problems[0], new RegExp(`authority is now ${other.toBase58()}, not the payer`));
    // And indeed the chain refuses it.
    const tx = decodeTx(built.body.transaction);
    tx.sign([wallet]);
    const refused = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: { transaction: b64(tx.serialize()) },
    });
    assertEquals(refused.status, 400);
  });
});
