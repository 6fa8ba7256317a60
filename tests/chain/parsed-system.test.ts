/**
 * jsonParsed System instructions as a node shows them, for the ones a build's mint is created
 * with: Transfer, AllocateWithSeed (and AssignWithSeed, its sibling).
 */
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assertEquals } from "../support/assert.ts";
import { connect, fund, signed, start } from "./helpers.ts";

Deno.test("getTransaction jsonParsed: transfer, allocateWithSeed, assignWithSeed", async () => {
  const chain = await start();
  try {
    const conn = connect(chain);
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 1);
    const seed = "0123456789abcdef0123456789abcdef";
    const mint = await PublicKey.createWithSeed(payer.publicKey, seed, TOKEN_PROGRAM_ID);
    const tx = await signed(conn, payer, [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: mint, lamports: 1_461_600 }),
      SystemProgram.allocate({
        accountPubkey: mint,
        basePubkey: payer.publicKey,
        seed,
        space: 82,
        programId: TOKEN_PROGRAM_ID,
      }),
      SystemProgram.assign({
        accountPubkey: mint,
        basePubkey: payer.publicKey,
        seed,
        programId: TOKEN_PROGRAM_ID,
      }),
    ]);
    const sig = await conn.sendRawTransaction(tx.serialize());
    await conn.confirmTransaction(sig, "confirmed");
    const got = await conn.getParsedTransaction(sig, { commitment: "confirmed" });
    const [m, p, t] = [mint, payer.publicKey, TOKEN_PROGRAM_ID].map((k) => k.toBase58());
    assertEquals(
      got!.transaction.message.instructions.map((ix) => "parsed" in ix ? ix.parsed : ix),
      [
        { info: { destination: m, lamports: 1_461_600, source: p }, type: "transfer" },
        {
          info: { account: m, base: p, owner: t, seed, space: 82 },
          type: "allocateWithSeed",
        },
        { info: { account: m, base: p, owner: t, seed }, type: "assignWithSeed" },
      ],
    );
  } finally {
    await chain.close();
  }
});
