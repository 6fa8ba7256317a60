/**
 * POST /v1/transactions on the embedded chain: only the exact message built for the calling key,
 * signed by its payer, within the hour and before its blockhash expires, is sent; every other
 * transaction is refused with the rule it broke named in `fields.transaction`.
 */
import bs58 from "bs58";
import {
  Keypair,
  type Message,
  PublicKey,
  SystemInstruction,
  SystemProgram,
  Transaction,
  type VersionedTransaction,
} from "@solana/web3.js";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { messageAccountKeys } from "../../src/creation/wire.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { allEvents } from "../reliability/support.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function withRelayHarness(
  fn: (
    h: Harness,
    ctx: { apiKey: string; wallet: Keypair; jump: (ms: number) => void },
  ) => Promise<void>,
) {
  let offset = 0;
  // Slots move only when told, so expiry is reached on purpose and never by a slow machine.
  const h = await startHarness({
    clock: () => Date.now() + offset,
    chain: { slotMs: "manual" },
  });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    await fn(h, { apiKey, wallet, jump: (ms) => (offset += ms) });
  } finally {
    await h.close();
  }
}

async function buildTx(h: Harness, apiKey: string, wallet: Keypair, name = "Relay Cat") {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: wallet.publicKey.toBase58(),
      name,
      symbol: "RLY",
      metadataUri: "https://example.com/m/relay.json",
      supply: "10",
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return { body, tx: decodeTx(body.transaction) };
}

async function relay(h: Harness, apiKey: string, transaction: string) {
  const res = await h.request("/v1/transactions", {
    method: "POST",
    headers: bearer(apiKey),
    json: { transaction },
  });
  return { status: res.status, body: await res.json() };
}

const signed = (tx: VersionedTransaction, ...signers: Keypair[]) => {
  tx.sign(signers);
  return b64(tx.serialize());
};

/** The mint's seed, as the transaction shows it to anyone who sees it. */
const seedOf = (tx: VersionedTransaction) =>
  Transaction.populate(tx.message as Message).instructions
    .filter((ix) => ix.programId.equals(SystemProgram.programId))
    .map((ix) =>
      SystemInstruction.decodeInstructionType(ix) === "AllocateWithSeed"
        ? SystemInstruction.decodeAllocateWithSeed(ix).seed
        : null
    )
    .find((seed) => seed !== null)!;

/** The refusal's reason, after checking it is a 400 in the seed's shape. */
// deno-lint-ignore no-explicit-any
function refusal(r: { status: number; body: Record<string, any> }): string {
  assertEquals(r.status, 400, JSON.stringify(r.body));
  assertEquals(r.body.error.code, "invalid_request");
  return r.body.error.fields.transaction;
}

Deno.test("the exact built transaction, signed by the payer, is sent once and recorded as submitted", async () => {
  await withRelayHarness(async (h, { apiKey, wallet }) => {
    const { body, tx } = await buildTx(h, apiKey, wallet);
    const transaction = signed(tx, wallet);
    const first = await relay(h, apiKey, transaction);
    assertEquals(first.status, 202);
    assertEquals(first.body, {
      signature: bs58.encode(tx.signatures[0]),
      mint: body.mint,
      status: "submitted",
    });
    // The same transaction again: the same answer, and no second submission.
    const again = await relay(h, apiKey, transaction);
    assertEquals([again.status, again.body], [202, first.body]);
    const submitted = (await allEvents(h.kv)).filter((e) => e.type === "TransactionSubmitted");
    assertEquals(submitted.length, 1);
    await h.waitForConfirmation(first.body.signature);
    const record = await (await h.request(`/v1/tokens/${body.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals([record.status, record.signature], ["submitted", first.body.signature]);
  });
});

Deno.test("a transaction we did not build, or built but altered, is refused by name", async () => {
  await withRelayHarness(async (h, { apiKey, wallet }) => {
    const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
    const foreign = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: blockhash })
      .add(SystemProgram.transfer({
        fromPubkey: wallet.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000,
      }));
    foreign.sign(wallet);
    assertMatch(refusal(await relay(h, apiKey, b64(foreign.serialize()))), /^unknown build/);

    // One of this key's mints, in a message that differs from the built one (MintTo 10 -> 9).
    const { tx } = await buildTx(h, apiKey, wallet);
    const message = tx.message as Message;
    const mintTo = message.instructions.find((ix) =>
      message.accountKeys[ix.programIdIndex].equals(TOKEN_PROGRAM_ID) &&
      bs58.decode(ix.data)[0] === 7
    )!;
    const data = bs58.decode(mintTo.data);
    data[1] -= 1;
    mintTo.data = bs58.encode(data);
    assertMatch(refusal(await relay(h, apiKey, signed(tx, wallet))), /^altered message/);
  });
});

Deno.test("a signature that is not the payer's is refused; so is a build past the hour or its blockhash", async () => {
  await withRelayHarness(async (h, { apiKey, wallet, jump }) => {
    const { tx } = await buildTx(h, apiKey, wallet, "Sig Cat");
    // The payer's signature with one bit flipped: it no longer verifies over the message.
    const bytes = Uint8Array.from(atob(signed(tx, wallet)), (c) => c.charCodeAt(0));
    bytes[1] ^= 1;
    assertMatch(refusal(await relay(h, apiKey, b64(bytes))), /^bad signature/);

    const late = await buildTx(h, apiKey, wallet, "Late Cat");
    jump(3_601_000);
    assertMatch(refusal(await relay(h, apiKey, signed(late.tx, wallet))), /older than one hour/);
    jump(-3_601_000);

    const stale = await buildTx(h, apiKey, wallet, "Stale Cat");
    const height = await h.services.connection.getBlockHeight("confirmed");
    h.chain.advanceSlots(stale.body.lastValidBlockHeight - height + 2);
    assertMatch(refusal(await relay(h, apiKey, signed(stale.tx, wallet))), /^expired/);
  });
});

Deno.test("the network's refusal is simulation_failed with its logs; bytes that are no transaction are refused", async () => {
  await withRelayHarness(async (h, { apiKey, wallet }) => {
    const { tx } = await buildTx(h, apiKey, wallet, "Broke Cat");
    // The payer spends its balance between the build and the relay.
    const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
    const balance = await h.services.connection.getBalance(wallet.publicKey, "confirmed");
    const drain = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: blockhash })
      .add(SystemProgram.transfer({
        fromPubkey: wallet.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: balance - 5_000, // all of it but the network fee: an account may be left at 0
      }));
    drain.sign(wallet);
    await h.waitForConfirmation(
      await h.services.connection.sendRawTransaction(drain.serialize()),
    );
    const r = await relay(h, apiKey, signed(tx, wallet));
    assertEquals([r.status, r.body.error.code], [400, "simulation_failed"]);
    assert(Array.isArray(r.body.error.fields.logs));
    // The reason, not only the code: a payer left with nothing cannot pay the network fee.
    assertEquals(r.body.error.fields.error, "AccountNotFound");
    assertEquals(r.body.error.fields.instruction.index, null);
    assertEquals(r.body.error.fields.instruction.code, "AccountNotFound");
    assertMatch(r.body.error.fields.transaction, /no record of a prior credit/);

    // An instruction's failure: after the build the payer itself (the seed's base, the only one
    // who can) creates an account at the mint's address, so the System Program refuses to
    // allocate the mint there. Named by index, program, code and message.
    const payer2 = h.fundedWallet();
    const other = await buildTx(h, apiKey, payer2, "Taken Cat");
    const seed = seedOf(other.tx);
    const { blockhash: recent } = await h.services.connection.getLatestBlockhash("confirmed");
    const preempt = new Transaction({ feePayer: payer2.publicKey, recentBlockhash: recent }).add(
      SystemProgram.createAccountWithSeed({
        fromPubkey: payer2.publicKey,
        basePubkey: payer2.publicKey,
        seed,
        newAccountPubkey: new PublicKey(other.body.mint),
        lamports: 2_000_000,
        space: 82,
        programId: TOKEN_PROGRAM_ID,
      }),
    );
    preempt.sign(payer2);
    await h.waitForConfirmation(
      await h.services.connection.sendRawTransaction(preempt.serialize()),
    );
    const taken = await relay(h, apiKey, signed(other.tx, payer2));
    assertEquals([taken.status, taken.body.error.code], [400, "simulation_failed"]);
    const f = taken.body.error.fields;
    // The mint's System instructions are the fund (a transfer) and then the allocation.
    const systemIndex = other.tx.message.compiledInstructions.findIndex((ix) =>
      other.tx.message.staticAccountKeys[ix.programIdIndex].equals(SystemProgram.programId) &&
      ix.data[0] === 9 // AllocateWithSeed
    );
    assertEquals(f.error, { InstructionError: [systemIndex, { Custom: 0 }] });
    assertEquals(
      [f.instruction.index, f.instruction.program, f.instruction.code],
      [systemIndex, SystemProgram.programId.toBase58(), 0],
    );
    assertMatch(f.instruction.message, /already in use/);
    assertMatch(taken.body.error.message, /already in use/);
    assert(f.logs.some((l: string) => l.includes("already in use")));

    for (
      const [transaction, reason] of [
        ["not base64!", /^not a legacy transaction in base64/],
        [b64(new Uint8Array(1233)), /over the 1232 bytes/],
        [b64(new Uint8Array([1, ...new Uint8Array(64), 0x80, ...new Uint8Array(10)])), /versioned/],
      ] as const
    ) assertMatch(refusal(await relay(h, apiKey, transaction)), reason);
  });
});

Deno.test("a message claiming more account keys than it holds is not read past its end", () => {
  // Header, then a key count of 2^21 - 1 in three bytes, then 100 bytes: three keys at most.
  const message = new Uint8Array([1, 0, 0, 0xff, 0xff, 0x7f, ...new Uint8Array(100)]);
  let error = "";
  try {
    messageAccountKeys(message);
  } catch (e) {
    error = (e as Error).message;
  }
  assertEquals(error, "truncated account keys");
  const two = new Uint8Array([1, 0, 0, 2, ...new Uint8Array(64).fill(1)]);
  assertEquals(messageAccountKeys(two), [
    new PublicKey(new Uint8Array(32).fill(1)).toBase58(),
    new PublicKey(new Uint8Array(32).fill(1)).toBase58(),
  ]);
});
