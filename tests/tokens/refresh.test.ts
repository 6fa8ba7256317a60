/**
 * POST /v1/tokens/{mint}/refresh on the embedded chain: a build re-issued under a fresh blockhash
 * keeps its mint, seed, reference and instructions, is not counted against the daily limit, and
 * whichever of its messages lands first is the creation; the relay accepts every one of them, the
 * watcher waits for the newest, verification settles on the one that landed.
 */
import { type Keypair, type VersionedTransaction } from "@solana/web3.js";
import { assert, assertEquals, assertMatch, assertNotEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import type { PriceSource } from "../../src/pricing/price-source.ts";
import { TokenRefreshed } from "../../src/tokens/build-response.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { rpcTxReader } from "../../src/audit/chain-check.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { countingFetch } from "../support/counting-fetch.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

interface Ctx {
  apiKey: string;
  wallet: Keypair;
  jump: (ms: number) => void;
  setPrice: (usd: number) => void;
}

async function withHarness(fn: (h: Harness, ctx: Ctx) => Promise<void>) {
  let offset = 0;
  let usd = 150;
  const clock = () => Date.now() + offset;
  const current = () => ({ usd, publishTime: Math.floor(clock() / 1000), source: "fixed" });
  const price = { solUsd: () => Promise.resolve(current()), current } as PriceSource;
  // Slots move only when told, so expiry is reached on purpose and never by a slow machine.
  const h = await startHarness({
    clock,
    price,
    chain: { slotMs: "manual" },
    env: { TOKENS_PER_DAY: "2" },
  });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    await fn(h, { apiKey, wallet, jump: (ms) => (offset += ms), setPrice: (p) => (usd = p) });
  } finally {
    await h.close();
  }
}

async function build(h: Harness, apiKey: string, wallet: Keypair, name: string) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: wallet.publicKey.toBase58(),
      name,
      symbol: "RFR",
      metadataUri: "https://example.com/m/refresh.json",
      supply: "1000",
      decimals: 2,
    },
  });
  return { status: res.status, body: await res.json() };
}

async function refresh(h: Harness, apiKey: string, mint: string) {
  const res = await h.request(`/v1/tokens/${mint}/refresh`, {
    method: "POST",
    headers: bearer(apiKey),
  });
  return { status: res.status, body: await res.json() };
}

async function relay(h: Harness, apiKey: string, tx: VersionedTransaction, wallet: Keypair) {
  tx.sign([wallet]);
  const res = await h.request("/v1/transactions", {
    method: "POST",
    headers: bearer(apiKey),
    json: { transaction: b64(tx.serialize()) },
  });
  return { status: res.status, body: await res.json() };
}

async function record(h: Harness, apiKey: string, mint: string) {
  const res = await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) });
  return await res.json();
}

async function verify(h: Harness, apiKey: string, signature: string) {
  const res = await h.request(`/v1/transactions/${signature}`, { headers: bearer(apiKey) });
  return await res.json();
}

/** The message with its blockhash blanked: what a refresh must leave as it was. */
const instructionsOf = (tx: VersionedTransaction) => {
  const m = tx.message;
  return JSON.stringify({
    keys: m.staticAccountKeys.map((k) => k.toBase58()),
    ixs: m.compiledInstructions.map((ix) => [ix.programIdIndex, ix.accountKeyIndexes, [
      ...ix.data,
    ]]),
  });
};

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

const pastExpiry = async (h: Harness, lastValidBlockHeight: number) => {
  const height = await h.services.connection.getBlockHeight("confirmed");
  h.chain.advanceSlots(Math.max(0, lastValidBlockHeight - height) + 2);
};

Deno.test("an expired build, refreshed: same mint and instructions, a fresh blockhash, not counted; it lands confirmed", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const first = await build(h, apiKey, wallet, "Slow Signer");
    assertEquals(first.status, 201, JSON.stringify(first.body));
    const mint = first.body.mint;
    await pastExpiry(h, first.body.lastValidBlockHeight);
    await sweepOpenBuilds(h.services);
    assertEquals((await record(h, apiKey, mint)).status, "expired");

    const r = await refresh(h, apiKey, mint);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    TokenRefreshed.parse(r.body);
    assertEquals([r.body.mint, r.body.buildId, r.body.feeQuote, r.body.refreshes], [
      mint,
      first.body.buildId,
      "quoted",
      1,
    ]);
    assertEquals(r.body.fee, first.body.fee);
    assertEquals(r.body.costs, first.body.costs);
    assertNotEquals(r.body.recentBlockhash, first.body.recentBlockhash);
    assert(r.body.lastValidBlockHeight > first.body.lastValidBlockHeight);
    const fresh = decodeTx(r.body.transaction);
    assertEquals(instructionsOf(fresh), instructionsOf(decodeTx(first.body.transaction)));
    assertEquals(fresh.message.recentBlockhash, r.body.recentBlockhash);
    // Open again, with the refreshed message's validity.
    assertEquals((await record(h, apiKey, mint)).status, "built");

    // A second refresh is not counted either: the limit of 2 still allows one more build.
    assertEquals((await refresh(h, apiKey, mint)).body.refreshes, 2);
    assertEquals((await build(h, apiKey, wallet, "Second Build")).status, 201);
    const third = await build(h, apiKey, wallet, "Third Build");
    assertEquals([third.status, third.body.error.code], [429, "daily_limit"]);

    const sent = await relay(
      h,
      apiKey,
      decodeTx((await refresh(h, apiKey, mint)).body.transaction),
      wallet,
    );
    assertEquals(sent.status, 202, JSON.stringify(sent.body));
    await h.waitForConfirmation(sent.body.signature);
    const v = await verify(h, apiKey, sent.body.signature);
    assertEquals([v.status, v.feeVerified, v.mint, v.supplyRaw], [
      "confirmed",
      true,
      mint,
      "100000",
    ]);
    const rec = await record(h, apiKey, mint);
    assertEquals([rec.status, rec.signature, rec.feeVerified], [
      "confirmed",
      sent.body.signature,
      true,
    ]);
    const rows = await audited(h);
    const row = rows.find((b) => b.mint === mint)!;
    assertEquals([row.status, row.signature, row.feeSeenLamports, row.quotedLamports], [
      "confirmed",
      sent.body.signature,
      first.body.fee.lamports,
      first.body.fee.lamports,
    ]);
    // Landed: nothing more to refresh.
    const late = await refresh(h, apiKey, mint);
    assertEquals([late.status, late.body.error.code], [400, "invalid_request"]);
    assertMatch(late.body.error.fields.mint, /has landed \(confirmed\)/);
  });
});

Deno.test("refreshed before expiry: the watcher waits for the new message; the old one, relayed after, fails harmlessly", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const first = await build(h, apiKey, wallet, "Both Valid");
    const mint = first.body.mint;
    h.chain.advanceSlots(60);
    const r = await refresh(h, apiKey, mint);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    assert(r.body.lastValidBlockHeight > first.body.lastValidBlockHeight);

    // Past the first message's validity, within the refreshed one's: still open.
    await pastExpiry(h, first.body.lastValidBlockHeight);
    await sweepOpenBuilds(h.services);
    assertEquals((await record(h, apiKey, mint)).status, "built");

    const sent = await relay(h, apiKey, decodeTx(r.body.transaction), wallet);
    assertEquals(sent.status, 202, JSON.stringify(sent.body));
    await h.waitForConfirmation(sent.body.signature);
    await sweepOpenBuilds(h.services);
    assertEquals((await verify(h, apiKey, sent.body.signature)).status, "confirmed");

    // The first message is still one of the build's (the relay knows it), and the cluster
    // refuses it: its blockhash has expired and the mint exists. The record does not move.
    const old = await relay(h, apiKey, decodeTx(first.body.transaction), wallet);
    assertEquals([old.status, old.body.error.code], [400, "simulation_failed"]);
    const rec = await record(h, apiKey, mint);
    assertEquals([rec.status, rec.signature, rec.feeVerified], [
      "confirmed",
      sent.body.signature,
      true,
    ]);
  });
});

Deno.test("the old message lands first: it is the creation, and the refreshed one then fails harmlessly", async () => {
  await withHarness(async (h, { apiKey, wallet, jump, setPrice }) => {
    const first = await build(h, apiKey, wallet, "Old Wins");
    const mint = first.body.mint;
    // The quote has run out and SOL fell: the refresh is re-priced, at a higher fee in lamports.
    jump((h.services.config.quoteTtlS + 1) * 1000);
    setPrice(100);
    const r = await refresh(h, apiKey, mint);
    assertEquals([r.status, r.body.feeQuote], [200, "repriced"]);
    assert(BigInt(r.body.fee.lamports) > BigInt(first.body.fee.lamports));
    assertEquals(
      BigInt(r.body.costs.totalLamports) - BigInt(first.body.costs.totalLamports),
      BigInt(r.body.fee.lamports) - BigInt(first.body.fee.lamports),
    );

    // The first message, at the fee it was quoted, lands: confirmed, its fee verified.
    const sent = await relay(h, apiKey, decodeTx(first.body.transaction), wallet);
    assertEquals(sent.status, 202, JSON.stringify(sent.body));
    await h.waitForConfirmation(sent.body.signature);
    const v = await verify(h, apiKey, sent.body.signature);
    assertEquals([v.status, v.feeVerified, v.fee.amount], [
      "confirmed",
      true,
      first.body.fee.lamports,
    ]);
    // The refreshed message: accepted by the relay as the build's, refused by the cluster.
    const second = await relay(h, apiKey, decodeTx(r.body.transaction), wallet);
    assertEquals([second.status, second.body.error.code], [400, "simulation_failed"]);
    assertEquals((await record(h, apiKey, mint)).signature, sent.body.signature);
    // The audit agrees: quoted is the lowest fee issued, which the landing paid.
    const [row] = await audited(h);
    assertEquals([row.status, row.feeSeenLamports, row.quotedLamports], [
      "confirmed",
      first.body.fee.lamports,
      first.body.fee.lamports,
    ]);
  });
});

Deno.test("refresh is refused for another key's build and an unknown mint (404), and a bad address (400)", async () => {
  await withHarness(async (h, { apiKey, wallet }) => {
    const first = await build(h, apiKey, wallet, "Mine Only");
    const other = await h.newApiKey();
    const theirs = await refresh(h, other.apiKey, first.body.mint);
    assertEquals([theirs.status, theirs.body.error.code], [404, "not_found"]);
    const unknown = await refresh(h, apiKey, h.fundedWallet().publicKey.toBase58());
    assertEquals([unknown.status, unknown.body.error.code], [404, "not_found"]);
    const bad = await refresh(h, apiKey, "not-a-mint");
    assertEquals([bad.status, Object.keys(bad.body.error.fields)], [400, ["mint"]]);
    const anonymous = await h.request(`/v1/tokens/${first.body.mint}/refresh`, { method: "POST" });
    assertEquals(anonymous.status, 401);
    // The owner's refresh still works after all that.
    assertEquals((await refresh(h, apiKey, first.body.mint)).status, 200);
  });
});

Deno.test("a refresh costs what a build's round trip costs: accounts, fee market, simulation", async () => {
  const rpc = countingFetch();
  const h = await startHarness({ rpcFetch: rpc.fetchFn });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const first = await build(h, apiKey, wallet, "Counted");
    assertEquals(first.status, 201);
    rpc.take();
    assertEquals((await refresh(h, apiKey, first.body.mint)).status, 200);
    assertEquals(rpc.take(), {
      getMultipleAccounts: 1,
      getRecentPrioritizationFees: 1,
      simulateTransaction: 1,
    });
  } finally {
    await h.close();
  }
});
