import { assert, assertEquals } from "../support/assert.ts";
import {
  Keypair,
  LAMPORTS_PER_SOL,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { connect, fund, rpc, signed, start } from "./helpers.ts";

Deno.test("simulateTransaction options: sigVerify, replaceRecentBlockhash, accounts, innerInstructions", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    await fund(chain, payer.publicKey, 2);
    const mint = Keypair.generate();
    const ata = getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey);
    const tx = await signed(conn, payer, [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: await conn.getMinimumBalanceForRentExemption(MINT_SIZE),
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(mint.publicKey, 0, payer.publicKey, null),
      createAssociatedTokenAccountIdempotentInstruction(
        payer.publicKey,
        ata,
        payer.publicKey,
        mint.publicKey,
      ),
    ], [mint]);
    const b64 = tx.serialize().toString("base64");
    type Sim = { context: { slot: number }; value: Record<string, unknown> };

    const full = (await rpc(chain, "simulateTransaction", [b64, {
      encoding: "base64",
      sigVerify: true,
      innerInstructions: true,
      accounts: { encoding: "jsonParsed", addresses: [mint.publicKey.toBase58(), ata.toBase58()] },
    }])).body.result as Sim;
    assertEquals(full.context.slot, await conn.getSlot("finalized")); // the node's default
    assertEquals(full.value.err, null);
    const accounts = full.value.accounts as { data: unknown; owner: string }[];
    assertEquals((accounts[0].data as { parsed: { type: string } }).parsed.type, "mint");
    // Like the node, no mint lookup is done for simulated token accounts: binary fallback.
    assertEquals((accounts[1].data as string[])[1], "base64");
    assertEquals(accounts[1].owner, TOKEN_PROGRAM_ID.toBase58());
    const inner = full.value.innerInstructions as {
      index: number;
      instructions: { program?: string }[];
    }[];
    assertEquals(inner[0].index, 2);
    assert(inner[0].instructions.some((i) => i.program === "system"));
    assert((full.value.unitsConsumed as number) > 0);
    assertEquals(full.value.replacementBlockhash, null);
    assertEquals(await conn.getAccountInfo(mint.publicKey, "processed"), null, "no state change");

    const forged = Uint8Array.from(tx.serialize());
    forged[10] ^= 1;
    const bad = await rpc(chain, "simulateTransaction", [
      btoa(String.fromCharCode(...forged)),
      { encoding: "base64", sigVerify: true },
    ]);
    assertEquals(bad.body.error?.code, -32003);
    const both = await rpc(chain, "simulateTransaction", [b64, {
      encoding: "base64",
      sigVerify: true,
      replaceRecentBlockhash: true,
    }]);
    assertEquals(both.body.error, {
      code: -32602,
      message: "sigVerify may not be used with replaceRecentBlockhash",
    });

    // An expired blockhash simulates fine once replaced, and says what it was replaced with.
    chain.advanceSlots(151);
    const stale = (await rpc(chain, "simulateTransaction", [b64, { encoding: "base64" }])).body
      .result as Sim;
    assertEquals(stale.value.err, "BlockhashNotFound");
    const replaced = (await rpc(chain, "simulateTransaction", [b64, {
      encoding: "base64",
      replaceRecentBlockhash: true,
    }])).body.result as Sim;
    assertEquals(replaced.value.err, null);
    const rb = replaced.value.replacementBlockhash as {
      blockhash: string;
      lastValidBlockHeight: number;
    };
    assertEquals(rb.lastValidBlockHeight, chain.blockHeight() + 150);
  } finally {
    await chain.close();
  }
});

Deno.test("v0 transactions and getBlock", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    await fund(chain, payer.publicKey, 2);
    chain.advanceSlots(1); // the airdrop gets a block of its own
    const { blockhash } = await conn.getLatestBlockhash("processed");
    const msg = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        SystemProgram.transfer({
          fromPubkey: payer.publicKey,
          toPubkey: to,
          lamports: LAMPORTS_PER_SOL,
        }),
      ],
    }).compileToV0Message();
    const vtx = new VersionedTransaction(msg);
    vtx.sign([payer]);
    const sig = await conn.sendTransaction(vtx);
    const slot = chain.slot();
    chain.advanceSlots(1);
    assertEquals(await conn.getBalance(to), LAMPORTS_PER_SOL);

    const legacyClient = await rpc(chain, "getTransaction", [sig, { commitment: "confirmed" }]);
    assertEquals(legacyClient.body.error?.code, -32015);
    const got = await conn.getTransaction(sig, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assertEquals(got?.version, 0);
    assertEquals(got?.meta?.fee, 5000);

    const block = await conn.getBlock(slot, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assert(block);
    assertEquals(block.transactions.map((t) => t.transaction.signatures[0]), [sig]);
    assertEquals(block.parentSlot, slot - 1);
    const hashes = await conn.getBlock(slot - 1, {
      commitment: "confirmed",
      transactionDetails: "none",
    });
    assertEquals(block.previousBlockhash, hashes?.blockhash);
    const tooNew = await rpc(chain, "getBlock", [chain.slot() + 5, { commitment: "confirmed" }]);
    assertEquals(tooNew.body.error?.code, -32004);
  } finally {
    await chain.close();
  }
});
