import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { Keypair, LAMPORTS_PER_SOL, SendTransactionError, SystemProgram } from "@solana/web3.js";
import { createTransferInstruction, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { connect, fund, rpc, signed, simulate, start } from "./helpers.ts";

Deno.test("a failing transaction: simulated logs, refused by preflight, recorded without it", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    const to = Keypair.generate().publicKey;
    // Spends more than the payer has: the System Program fails with custom error 1.
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: to,
        lamports: 5 * LAMPORTS_PER_SOL,
      }),
    ]);

    const sim = await simulate(conn, tx);
    assertEquals(sim.value.err, { InstructionError: [0, { Custom: 1 }] });
    assertEquals(sim.value.logs, [
      "Program 11111111111111111111111111111111 invoke [1]",
      `Transfer: insufficient lamports ${LAMPORTS_PER_SOL - 5000}, need ${5 * LAMPORTS_PER_SOL}`,
      "Program 11111111111111111111111111111111 failed: custom program error: 0x1",
    ]);
    assertEquals(sim.value.unitsConsumed, 150);
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), LAMPORTS_PER_SOL);

    const refused = await rpc(chain, "sendTransaction", [
      tx.serialize().toString("base64"),
      { encoding: "base64" },
    ]);
    assertEquals(refused.body.error?.code, -32002);
    assertEquals(
      refused.body.error?.message,
      "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
    );
    const data = refused.body.error?.data as Record<string, unknown>;
    assertEquals(data.err, { InstructionError: [0, { Custom: 1 }] });
    assertEquals(data.accounts, null);
    assertEquals(data.unitsConsumed, 150);
    assertEquals((data.logs as string[]).length, 3);
    const e = await assertRejects(
      () => conn.sendRawTransaction(tx.serialize()),
      SendTransactionError,
    );
    assertEquals((e as SendTransactionError).logs?.length, 3);
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), LAMPORTS_PER_SOL);

    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), LAMPORTS_PER_SOL - 5000);
    assertEquals(await conn.getBalance(to, "processed"), 0);
    chain.advanceSlots(1);
    const status = (await conn.getSignatureStatuses([sig])).value[0];
    assertEquals(status?.err, { InstructionError: [0, { Custom: 1 }] });
    const got = await conn.getTransaction(sig, { commitment: "confirmed" });
    assertEquals(got!.meta!.err, { InstructionError: [0, { Custom: 1 }] });
    assertEquals(got!.meta!.fee, 5000);
    assertEquals(got!.meta!.preBalances[0] - got!.meta!.postBalances[0], 5000);
    const raw = await rpc(chain, "getTransaction", [sig, { commitment: "confirmed" }]);
    const meta = (raw.body.result as { meta: Record<string, unknown> }).meta;
    assertEquals(meta.status, { Err: { InstructionError: [0, { Custom: 1 }] } });
    assertEquals(meta.rewards, []);
    assertEquals(meta.loadedAddresses, { readonly: [], writable: [] });
    const listed = await conn.getSignaturesForAddress(payer.publicKey, {}, "confirmed");
    assertEquals(listed[0].err, { InstructionError: [0, { Custom: 1 }] });
  } finally {
    await chain.close();
  }
});

Deno.test("failures before execution never land: unknown payer, program errors in simulation", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const ghost = Keypair.generate();
    const tx = await signed(conn, ghost, [
      SystemProgram.transfer({
        fromPubkey: ghost.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1,
      }),
    ]);
    const sim = await simulate(conn, tx);
    assertEquals(sim.value.err, "AccountNotFound");
    const refused = await rpc(chain, "sendTransaction", [
      tx.serialize().toString("base64"),
      { encoding: "base64" },
    ]);
    assertEquals(
      refused.body.error?.message,
      "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.",
    );
    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    chain.advanceSlots(1);
    assertEquals(
      (await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0],
      null,
    );

    // A token-program failure reports the program's own logs and custom error.
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    const bogus = await signed(conn, payer, [
      createTransferInstruction(
        Keypair.generate().publicKey,
        Keypair.generate().publicKey,
        payer.publicKey,
        1n,
        [],
        TOKEN_PROGRAM_ID,
      ),
    ]);
    const s2 = await simulate(conn, bogus);
    assert(s2.value.err, "expected a failure");
    assert(
      s2.value.logs!.some((l) => l.startsWith(`Program ${TOKEN_PROGRAM_ID.toBase58()} failed`)),
    );
  } finally {
    await chain.close();
  }
});
