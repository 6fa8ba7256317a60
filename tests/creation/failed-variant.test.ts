/**
 * A wallet may change a transaction before sending it (a priority fee, assertions), which gives
 * it another signature. When such a version fails and another version of the same build then
 * succeeds before the blockhash expires, the success is the build's outcome: the failure is a
 * recorded fact (`TransactionFailed`), the build stays open, no `token.failed` is ever sent, and
 * a replay of the log gives the same records. With no success by expiry, the build is `failed`.
 * On the embedded chain, with the watcher's sweeps run by the test.
 */
import { Keypair, SystemProgram, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { webhookTypeOf } from "../../src/webhooks/decide.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { allEvents } from "../reliability/support.ts";
import { build, type Built } from "../integrators/support.ts";

/** The build's transaction with one more instruction, which fails (a transfer the payer can't pay). */
async function failingVersion(h: Harness, payer: Keypair, b: Built): Promise<string> {
  const original = decodeTx(b.transaction);
  const message = TransactionMessage.decompile(original.message);
  message.instructions.push(SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: Keypair.generate().publicKey,
    lamports: 1_000_000_000_000_000,
  }));
  const tx = new VersionedTransaction(message.compileToLegacyMessage());
  tx.sign([payer]);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize(), {
    skipPreflight: true,
  });
  const failed = await h.waitForConfirmation(sig).then(() => null, (e: Error) => e.message);
  assert(failed !== null, "the modified version succeeded");
  // Confirmed (an error is reported as soon as it is processed): the watcher lists confirmed.
  for (let i = 0; i < 400; i++) {
    const st = (await h.services.connection.getSignatureStatuses([sig])).value[0];
    if (st?.confirmationStatus === "confirmed" || st?.confirmationStatus === "finalized") {
      return sig;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${sig} not confirmed`);
}

async function sendOriginal(h: Harness, payer: Keypair, b: Built): Promise<string> {
  const tx = decodeTx(b.transaction);
  tx.sign([payer]);
  const sig = bs58.encode(tx.signatures[0]);
  await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

const get = async (h: Harness, apiKey: string, path: string) =>
  await (await h.request(path, { headers: bearer(apiKey) })).json();

async function outcomes(h: Harness, buildId: number) {
  const events = (await allEvents(h.kv)).filter((e) =>
    (e.data as { buildId?: number }).buildId === buildId
  );
  return {
    types: events.map((e) => e.type).filter((t) => t !== "TokenBuilt"),
    webhooks: events.map((e) => webhookTypeOf(e)).filter((t) => t !== null),
  };
}

Deno.test("given a failed version of a build, when another version succeeds before the blockhash expires, then the build is confirmed and token.failed is never sent", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const b = await build(h, apiKey, wallet, "Variant Cat");
    const failedSig = await failingVersion(h, wallet, b);
    await sweepOpenBuilds(h.services);

    // The failure is recorded, but the build is still open; that transaction reads as failed.
    assertEquals((await outcomes(h, b.buildId)).types, ["TransactionFailed"]);
    let record = await get(h, apiKey, `/v1/tokens/${b.mint}`);
    assertEquals(record.status, "built");
    assertEquals((await get(h, apiKey, `/v1/transactions/${failedSig}`)).status, "failed");
    // Seen again by the next sweep: nothing is recorded twice.
    await sweepOpenBuilds(h.services);
    assertEquals((await outcomes(h, b.buildId)).types, ["TransactionFailed"]);

    const sig = await sendOriginal(h, wallet, b);
    await sweepOpenBuilds(h.services);
    record = await get(h, apiKey, `/v1/tokens/${b.mint}`);
    assertEquals([record.status, record.signature], ["confirmed", sig]);
    const seen = await outcomes(h, b.buildId);
    assertEquals(seen.types, ["TransactionFailed", "TransactionSubmitted", "CreationConfirmed"]);
    assertEquals(seen.webhooks, ["token.confirmed"]);

    // Past the blockhash the success stays: nothing more is recorded.
    h.chain.advanceSlots(200);
    await sweepOpenBuilds(h.services, { full: true });
    assertEquals((await outcomes(h, b.buildId)).types.length, 3);

    const replay = await replayAndCompare(h.kv, allProjections);
    assert(replay.equal, JSON.stringify(replay.mismatches));
  } finally {
    await h.close();
  }
});

Deno.test("given a failed version of a build and no success, when its blockhash expires, then the build is failed under that signature, and token.failed is sent once", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const b = await build(h, apiKey, wallet, "Variant Dog");
    const failedSig = await failingVersion(h, wallet, b);
    await sweepOpenBuilds(h.services);
    assertEquals((await get(h, apiKey, `/v1/tokens/${b.mint}`)).status, "built");

    // The build answer says until when its blockhash is valid; confirmed heights trail a little.
    const { lastValidBlockHeight } = b as Built & { lastValidBlockHeight: number };
    h.chain.advanceSlots(lastValidBlockHeight - h.chain.blockHeight() + 40);
    await sweepOpenBuilds(h.services, { full: true });

    const record = await get(h, apiKey, `/v1/tokens/${b.mint}`);
    assertEquals([record.status, record.signature], ["failed", failedSig]);
    const seen = await outcomes(h, b.buildId);
    assertEquals(seen.types, ["TransactionFailed", "TransactionSubmitted", "CreationFailed"]);
    assertEquals(seen.webhooks, ["token.failed"]);
    const replay = await replayAndCompare(h.kv, allProjections);
    assert(replay.equal, JSON.stringify(replay.mismatches));
  } finally {
    await h.close();
  }
});
