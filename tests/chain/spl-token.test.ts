import { assert, assertEquals } from "../support/assert.ts";
import { Keypair, type ParsedAccountData } from "@solana/web3.js";
import {
  createAssociatedTokenAccountIdempotent,
  createMint,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
  mintTo,
  TOKEN_PROGRAM_ID,
  transfer,
} from "@solana/spl-token";
import { connect, fund, settleWebSocket, start } from "./helpers.ts";

Deno.test("spl-token helpers: mint, ATA twice, mintTo, transfer, balances in meta", async () => {
  const chain = await start({ slotMs: 20 });
  try {
    const conn = connect(chain);
    const payer = Keypair.generate();
    const owner = Keypair.generate();
    await fund(chain, payer.publicKey, 10);
    const opts = { commitment: "confirmed" as const };

    const mint = await createMint(conn, payer, payer.publicKey, null, 6, undefined, opts);
    const mintInfo = await getMint(conn, mint);
    assertEquals(mintInfo.decimals, 6);
    assertEquals(mintInfo.supply, 0n);
    assert(mintInfo.mintAuthority?.equals(payer.publicKey));

    const ata = await createAssociatedTokenAccountIdempotent(
      conn,
      payer,
      mint,
      owner.publicKey,
      opts,
    );
    assert(ata.equals(getAssociatedTokenAddressSync(mint, owner.publicKey)));
    // Idempotent: the second create succeeds and changes nothing.
    const again = await createAssociatedTokenAccountIdempotent(
      conn,
      payer,
      mint,
      owner.publicKey,
      opts,
    );
    assert(again.equals(ata));

    const mintSig = await mintTo(conn, payer, mint, ata, payer, 2_500_000n, [], opts);
    assertEquals((await getAccount(conn, ata)).amount, 2_500_000n);

    const supply = await conn.getTokenSupply(mint);
    assertEquals(supply.value, {
      amount: "2500000",
      decimals: 6,
      uiAmount: 2.5,
      uiAmountString: "2.5",
    });
    const bal = await conn.getTokenAccountBalance(ata);
    assertEquals(bal.value.amount, "2500000");
    assertEquals(bal.value.uiAmountString, "2.5");

    const mintTx = await conn.getTransaction(mintSig, { commitment: "confirmed" });
    const keys = mintTx!.transaction.message.accountKeys.map((k) => k.toBase58());
    const ataIndex = keys.indexOf(ata.toBase58());
    assertEquals(mintTx!.meta!.preTokenBalances, [{
      accountIndex: ataIndex,
      mint: mint.toBase58(),
      owner: owner.publicKey.toBase58(),
      programId: TOKEN_PROGRAM_ID.toBase58(),
      uiTokenAmount: { amount: "0", decimals: 6, uiAmount: 0, uiAmountString: "0" },
    }]);
    assertEquals(mintTx!.meta!.postTokenBalances?.[0].uiTokenAmount.amount, "2500000");

    // A transfer to a second owner's ATA moves tokens; both balances appear in meta.
    const other = Keypair.generate();
    const otherAta = await createAssociatedTokenAccountIdempotent(
      conn,
      payer,
      mint,
      other.publicKey,
      opts,
    );
    await fund(chain, owner.publicKey, 1);
    const tSig = await transfer(conn, payer, ata, otherAta, owner, 1_000_000n, [], opts);
    const tTx = await conn.getTransaction(tSig, { commitment: "confirmed" });
    const post = Object.fromEntries(
      tTx!.meta!.postTokenBalances!.map((b) => [b.owner, b.uiTokenAmount.amount]),
    );
    assertEquals(post, {
      [owner.publicKey.toBase58()]: "1500000",
      [other.publicKey.toBase58()]: "1000000",
    });

    const parsed = await conn.getParsedAccountInfo(otherAta);
    const data = parsed.value!.data as ParsedAccountData;
    assertEquals(data.program, "spl-token");
    assertEquals(data.parsed.type, "account");
    assertEquals(data.parsed.info.tokenAmount.uiAmount, 1);
    assertEquals(data.parsed.info.owner, other.publicKey.toBase58());

    const byOwner = await conn.getParsedTokenAccountsByOwner(owner.publicKey, { mint });
    assertEquals(byOwner.value.map((a) => a.pubkey.toBase58()), [ata.toBase58()]);

    const parsedTx = await conn.getParsedTransaction(tSig, { commitment: "confirmed" });
    const ix = parsedTx!.transaction.message.instructions[0] as {
      program: string;
      parsed: { type: string; info: { amount: string } };
    };
    assertEquals(ix.program, "spl-token");
    assertEquals(ix.parsed.type, "transfer");
    assertEquals(ix.parsed.info.amount, "1000000");
    await settleWebSocket();
  } finally {
    await chain.close();
  }
});
