/**
 * Durable nonces on the embedded chain, held to the System program's and the bank's rules: a
 * nonce account is created and initialized; a transaction whose recent blockhash is the stored
 * nonce and whose first instruction advances it lands long after the blockhash window; the same
 * nonce then cannot be used again, a wrong nonce, another authority or a nonce not yet advanceable
 * is BlockhashNotFound; and a nonce transaction that lands with an error still advances the nonce.
 */
import {
  type Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  type PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { assert, assertEquals, assertNotEquals } from "../support/assert.ts";
import { base58Encode } from "../../src/chain/codec.ts";
import type { EmbeddedChain } from "../../src/chain/mod.ts";
import { durableNonceOf } from "../../src/chain/nonce.ts";
import { connect, fund, rpc, signed, start } from "./helpers.ts";

async function createNonce(
  conn: Connection,
  payer: Keypair,
  authority: PublicKey = payer.publicKey,
): Promise<PublicKey> {
  const nonce = Keypair.generate();
  const rent = await conn.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH);
  const tx = await signed(
    conn,
    payer,
    SystemProgram.createNonceAccount({
      fromPubkey: payer.publicKey,
      noncePubkey: nonce.publicKey,
      authorizedPubkey: authority,
      lamports: rent,
    }).instructions,
    [nonce],
  );
  await conn.sendRawTransaction(tx.serialize());
  return nonce.publicKey;
}

async function stored(conn: Connection, nonce: PublicKey) {
  const info = await conn.getAccountInfo(nonce, "processed");
  assert(info, "nonce account missing");
  return NonceAccount.fromAccountData(info.data);
}

/** A transaction on the nonce: advance first, then `ixs`; signed by the payer only. */
function onNonce(
  payer: Keypair,
  nonce: PublicKey,
  value: string,
  ixs: TransactionInstruction[],
  authority: PublicKey = payer.publicKey,
): Transaction {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value });
  tx.add(SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority }), ...ixs);
  tx.partialSign(payer);
  return tx;
}

const send = (chain: EmbeddedChain, tx: Transaction, skipPreflight = false) =>
  rpc(chain, "sendTransaction", [
    tx.serialize({ requireAllSignatures: false }).toString("base64"),
    { encoding: "base64", skipPreflight },
  ]);

const transfer = (from: Keypair, to: PublicKey, lamports: number) =>
  SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports });

Deno.test("durable nonce: created, used after the blockhash window, then spent", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    await fund(chain, payer.publicKey, 5);
    const nonce = await createNonce(conn, payer);
    const { blockhash: createdUnder } = await conn.getLatestBlockhash("processed");
    const created = await stored(conn, nonce);
    assertEquals(created.nonce, bs58.encode(durableNonceOf(createdUnder)));
    assertEquals(created.authorizedPubkey.toBase58(), payer.publicKey.toBase58());
    const info = await conn.getAccountInfo(nonce, "processed");
    assertEquals([info!.owner.toBase58(), info!.data.length], [
      SystemProgram.programId.toBase58(),
      NONCE_ACCOUNT_LENGTH,
    ]);
    // The stored nonce is the System program's DurableNonce, not a blockhash of the window.
    assertEquals(
      (await conn.isBlockhashValid(created.nonce, { commitment: "processed" })).value,
      false,
    );

    // Signed now, sent after the window of any blockhash of its time has passed.
    const tx = onNonce(payer, nonce, created.nonce, [transfer(payer, to, LAMPORTS_PER_SOL)]);
    chain.advanceSlots(200);
    // Simulated first, as a wallet would: valid, and nothing changes.
    const sim = await rpc(chain, "simulateTransaction", [
      tx.serialize({ requireAllSignatures: false }).toString("base64"),
      { encoding: "base64", sigVerify: false },
    ]);
    assertEquals((sim.body.result as { value: { err: unknown } }).value.err, null);
    assertEquals((await stored(conn, nonce)).nonce, created.nonce);
    const landed = await send(chain, tx);
    assertEquals(landed.body.error, undefined, JSON.stringify(landed.body));
    assertEquals(await conn.getBalance(to, "processed"), LAMPORTS_PER_SOL);
    const after = await stored(conn, nonce);
    assertNotEquals(after.nonce, created.nonce);
    // Advanced under the chain's current blockhash (one per slot), with the signature fee.
    assertEquals(after.feeCalculator.lamportsPerSignature, 5000);

    // The same nonce again: refused as an unknown blockhash, in preflight and without it.
    const again = onNonce(payer, nonce, created.nonce, [transfer(payer, to, 7)]);
    const refused = await send(chain, again);
    assertEquals((refused.body.error?.data as { err: unknown }).err, "BlockhashNotFound");
    await send(chain, again, true);
    chain.advanceSlots(1);
    assertEquals(await conn.getBalance(to, "processed"), LAMPORTS_PER_SOL);

    // A wrong nonce (any other 32 bytes) is no better.
    const wrong = onNonce(payer, nonce, bs58.encode(crypto.getRandomValues(new Uint8Array(32))), [
      transfer(payer, to, 9),
    ]);
    const bad = await send(chain, wrong);
    assertEquals((bad.body.error?.data as { err: unknown }).err, "BlockhashNotFound");

    // The next slot: the nonce can advance again, and does.
    const current = await stored(conn, nonce);
    const fresh = onNonce(payer, nonce, current.nonce, [transfer(payer, to, 11)]);
    assertEquals((await send(chain, fresh)).body.error, undefined);
    // Its new nonce, in the slot it was made: not advanceable (the System program would fail it
    // with NonceBlockhashNotExpired; the bank refuses it first). One slot on, it is.
    const now = await stored(conn, nonce);
    const sameSlot = onNonce(payer, nonce, now.nonce, [transfer(payer, to, 13)]);
    const early = await send(chain, sameSlot);
    assertEquals((early.body.error?.data as { err: unknown }).err, "BlockhashNotFound");
    chain.advanceSlots(1);
    assertEquals((await send(chain, sameSlot)).body.error, undefined);
    assertEquals(await conn.getBalance(to, "processed"), LAMPORTS_PER_SOL + 11 + 13);
  } finally {
    await chain.close();
  }
});

Deno.test("durable nonce: the authority must sign; another's nonce is BlockhashNotFound", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    const other = Keypair.generate();
    await fund(chain, payer.publicKey, 5);
    const nonce = await createNonce(conn, payer, other.publicKey);
    chain.advanceSlots(2);
    const { nonce: value } = await stored(conn, nonce);
    // Names the payer as authority: the stored authority is someone else.
    const tx = onNonce(payer, nonce, value, [transfer(payer, other.publicKey, 1_000_000)]);
    const refused = await send(chain, tx);
    assertEquals((refused.body.error?.data as { err: unknown }).err, "BlockhashNotFound");
    // Signed by the stored authority too, it lands.
    const both = onNonce(
      payer,
      nonce,
      value,
      [transfer(payer, other.publicKey, 1_000_000)],
      other
        .publicKey,
    );
    both.partialSign(other);
    const ok = await send(chain, both);
    assertEquals(ok.body.error, undefined, JSON.stringify(ok.body));
  } finally {
    await chain.close();
  }
});

Deno.test("durable nonce: a nonce transaction that fails still advances the nonce and pays the fee", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    await fund(chain, payer.publicKey, 1);
    const nonce = await createNonce(conn, payer);
    chain.advanceSlots(200);
    const before = await stored(conn, nonce);
    const balance = await conn.getBalance(payer.publicKey, "processed");
    // More than the payer holds: the transfer fails, after the advance.
    const tx = onNonce(payer, nonce, before.nonce, [transfer(payer, to, 5 * LAMPORTS_PER_SOL)]);
    const sent = await send(chain, tx, true);
    const { blockhash: landedUnder } = await conn.getLatestBlockhash("processed");
    const signature = sent.body.result as string;
    assertEquals(signature, base58Encode(tx.signature!));
    chain.advanceSlots(1);
    const got = await conn.getTransaction(signature, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assert(got?.meta?.err, "landed with an error");
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), balance - 5000);
    const after = await stored(conn, nonce);
    // Advanced to the System program's DurableNonce of the block it landed in.
    assertEquals(after.nonce, bs58.encode(durableNonceOf(landedUnder)));
    // And it cannot be replayed.
    const replay = await send(chain, tx);
    assertEquals((replay.body.error?.data as { err: unknown }).err, "BlockhashNotFound");
  } finally {
    await chain.close();
  }
});
