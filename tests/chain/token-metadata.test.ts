import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import {
  type Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SendTransactionError,
  SystemProgram,
  type TransactionInstruction,
} from "@solana/web3.js";
import {
  AuthorityType,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createSetAuthorityInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { getMetadataAccountDataSerializer } from "@metaplex-foundation/mpl-token-metadata";
import {
  createMetadataAccountV3Instruction,
  decodeMetadataAccount,
  MAX_METADATA_LEN,
  metadataCreateLamports,
  metadataPda,
  TOKEN_METADATA_PROGRAM_ID,
} from "../../src/solana/token-metadata.ts";
import type { EmbeddedChain } from "../../src/chain/mod.ts";
import { connect, fund, rpc, signed, simulate, start } from "./helpers.ts";

interface Build {
  mint: PublicKey;
  ata: PublicKey;
  metadata: PublicKey;
  ixs: TransactionInstruction[];
}

const TREASURY = Keypair.generate().publicKey;
const SERVICE_FEE = 20_000_000;

/** The token-creation transaction the product builds: one payer signature, seed-derived mint. */
async function tokenCreation(
  conn: Connection,
  payer: Keypair,
  o: {
    name?: string;
    metadata?: PublicKey;
    metadataMintAuthority?: PublicKey;
    revokeMintAuthority?: boolean;
  } = {},
): Promise<Build> {
  const seed = `mint-${crypto.randomUUID().slice(0, 8)}`;
  const mint = await PublicKey.createWithSeed(payer.publicKey, seed, TOKEN_PROGRAM_ID);
  const ata = getAssociatedTokenAddressSync(mint, payer.publicKey);
  const metadata = o.metadata ?? metadataPda(mint);
  const ixs = [
    SystemProgram.createAccountWithSeed({
      fromPubkey: payer.publicKey,
      basePubkey: payer.publicKey,
      seed,
      newAccountPubkey: mint,
      lamports: await conn.getMinimumBalanceForRentExemption(MINT_SIZE),
      space: MINT_SIZE,
      programId: TOKEN_PROGRAM_ID,
    }),
    createInitializeMint2Instruction(mint, 6, payer.publicKey, null),
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint),
    createMintToInstruction(mint, ata, payer.publicKey, 1_000_000_000_000n),
    createMetadataAccountV3Instruction({
      metadata,
      mint,
      mintAuthority: o.metadataMintAuthority ?? payer.publicKey,
      payer: payer.publicKey,
      updateAuthority: payer.publicKey,
      name: o.name ?? "Embedded Coin",
      symbol: "EMB",
      uri: "https://example.test/m/emb.json",
      isMutable: false,
    }),
  ];
  if (o.revokeMintAuthority !== false) {
    ixs.push(createSetAuthorityInstruction(mint, payer.publicKey, AuthorityType.MintTokens, null));
  }
  ixs.push(SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: TREASURY,
    lamports: SERVICE_FEE,
  }));
  return { mint, ata, metadata, ixs };
}

async function funded(chain: EmbeddedChain): Promise<Keypair> {
  const payer = Keypair.generate();
  await fund(chain, payer.publicKey, 5);
  return payer;
}

Deno.test("token creation: one atomic transaction, metadata readable by mpl-token-metadata", async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = await funded(chain);
    const before = await conn.getBalance(payer.publicKey, "processed");
    const b = await tokenCreation(conn, payer);
    const tx = await signed(conn, payer, b.ixs);

    // Simulation runs the whole thing and leaves no trace.
    const sim = await simulate(conn, tx, [b.metadata]);
    assertEquals(sim.value.err, null);
    assert(sim.value.logs!.includes("Program log: IX: Create Metadata Accounts v3"));
    // The metadata instruction alone uses 34.7k-52.8k CU on the real program (docs/chain.md).
    assert(sim.value.unitsConsumed! > 45_000, String(sim.value.unitsConsumed));
    const simMeta = sim.value.accounts![0]!;
    assertEquals(simMeta.owner, TOKEN_METADATA_PROGRAM_ID.toBase58());
    assertEquals(
      decodeMetadataAccount(Buffer.from(simMeta.data[0], "base64")).name,
      "Embedded Coin",
    );
    assertEquals(await conn.getAccountInfo(b.mint, "processed"), null);
    assertEquals(await conn.getAccountInfo(b.metadata, "processed"), null);

    const sig = await conn.sendRawTransaction(tx.serialize());
    const acc = await conn.getAccountInfo(b.metadata, "processed");
    assert(acc);
    assert(acc.owner.equals(TOKEN_METADATA_PROGRAM_ID));
    assertEquals(acc.data.length, MAX_METADATA_LEN);
    const metadataRent = await conn.getMinimumBalanceForRentExemption(MAX_METADATA_LEN);
    const protocolFee = metadataCreateLamports((n) =>
      n === MAX_METADATA_LEN ? BigInt(metadataRent) : n === 1308 ? 9_994_560n : -1n
    ).protocolFee;
    assertEquals(protocolFee, 10_000_000n);
    assertEquals(BigInt(acc.lamports), BigInt(metadataRent) + protocolFee);

    const [raw] = getMetadataAccountDataSerializer().deserialize(acc.data);
    assertEquals(raw.name, "Embedded Coin");
    // Stored puffed out with NULs to 32 bytes like the real program (umi strips them on read).
    assertEquals(acc.data.readUInt32LE(65), 32);
    const md = decodeMetadataAccount(acc.data);
    assertEquals(
      { name: md.name, symbol: md.symbol, uri: md.uri, isMutable: md.isMutable },
      {
        name: "Embedded Coin",
        symbol: "EMB",
        uri: "https://example.test/m/emb.json",
        isMutable: false,
      },
    );
    assertEquals(md.mint, b.mint.toBase58());
    assertEquals(md.updateAuthority, payer.publicKey.toBase58());
    assertEquals(md.tokenStandard, 2); // Fungible: the mint has decimals
    assertEquals(acc.data[MAX_METADATA_LEN - 1], 1); // fee flag

    const supply = await conn.getTokenSupply(b.mint, "processed");
    assertEquals(supply.value.uiAmount, 1_000_000);
    const mintInfo = await conn.getParsedAccountInfo(b.mint, "processed");
    assertEquals(
      (mintInfo.value!.data as { parsed: { info: { mintAuthority: unknown } } }).parsed.info
        .mintAuthority,
      null,
    );

    // The payer paid: fee once, mint and ATA rent, metadata rent + protocol fee, service fee.
    const mintRent = await conn.getMinimumBalanceForRentExemption(MINT_SIZE);
    const ataRent = await conn.getMinimumBalanceForRentExemption(165);
    assertEquals(
      await conn.getBalance(payer.publicKey, "processed"),
      before - 5000 - mintRent - ataRent - metadataRent - Number(protocolFee) -
        SERVICE_FEE,
    );
    assertEquals(await conn.getBalance(TREASURY, "processed"), SERVICE_FEE);

    chain.advanceSlots(1);
    const got = await conn.getTransaction(sig, { commitment: "confirmed" });
    assertEquals(got!.meta!.err, null);
    assertEquals(got!.meta!.fee, 5000);
    const logs = got!.meta!.logMessages!;
    const invokes = logs.filter((l) =>
      l.endsWith(" invoke [1]")
    ).map((l) => l.split(" ")[1]);
    assertEquals(invokes, [
      "11111111111111111111111111111111",
      TOKEN_PROGRAM_ID.toBase58(),
      "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
      TOKEN_PROGRAM_ID.toBase58(),
      TOKEN_METADATA_PROGRAM_ID.toBase58(),
      TOKEN_PROGRAM_ID.toBase58(),
      "11111111111111111111111111111111",
    ]);
    const inner = got!.meta!.innerInstructions!;
    assertEquals(inner.map((g) => g.index), [2, 4]); // the ATA program's CPIs, then metaplex's
    const keys = got!.transaction.message.accountKeys.map((k) => k.toBase58());
    const metaplexCpis = inner[1].instructions;
    assertEquals(metaplexCpis.length, 3); // levy transfer, allocate, assign
    assert(
      metaplexCpis.every((i) => keys[i.programIdIndex] === SystemProgram.programId.toBase58()),
    );
    assertEquals(got!.meta!.postTokenBalances![0].uiTokenAmount.uiAmountString, "1000000");
    assert(got!.meta!.computeUnitsConsumed! > 45_000);
  } finally {
    await chain.close();
  }
});

async function expectAtomicFailure(
  chain: EmbeddedChain,
  conn: Connection,
  payer: Keypair,
  build: Build,
  extraSigners: Keypair[],
  expectedErr: unknown,
  expectedLog: string,
): Promise<void> {
  const before = await conn.getBalance(payer.publicKey, "processed");
  const tx = await signed(conn, payer, build.ixs, extraSigners);
  const sim = await simulate(conn, tx);
  assertEquals(sim.value.err, expectedErr);
  assert(sim.value.logs!.includes(expectedLog), sim.value.logs!.join("\n"));

  // Preflight refuses it; nothing is charged.
  const err = await assertRejects(
    () => conn.sendRawTransaction(tx.serialize()),
    SendTransactionError,
  );
  assert(err.message.includes("Transaction simulation failed"), err.message);
  assertEquals(await conn.getBalance(payer.publicKey, "processed"), before);

  // Forced through without preflight it lands as failed: fee charged once, nothing else.
  const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
  const fee = 5000 * (1 + extraSigners.length);
  assertEquals(await conn.getBalance(payer.publicKey, "processed"), before - fee);
  assertEquals(await conn.getAccountInfo(build.mint, "processed"), null);
  assertEquals(await conn.getAccountInfo(build.ata, "processed"), null);
  assertEquals(await conn.getAccountInfo(metadataPda(build.mint), "processed"), null);
  assertEquals(await conn.getBalance(TREASURY, "processed"), 0);
  chain.advanceSlots(1);
  const got = await conn.getTransaction(sig, { commitment: "confirmed" });
  assertEquals(got!.meta!.err, expectedErr);
  assertEquals(got!.meta!.fee, fee);
  assertEquals(got!.meta!.postBalances[0], before - fee);
  assert(got!.meta!.logMessages!.includes(expectedLog));
  const status = (await conn.getSignatureStatuses([sig])).value[0];
  assertEquals(status?.err, expectedErr);
}

Deno.test("token creation: any metadata failure fails the whole transaction", async (t) => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = await funded(chain);

    await t.step("metadata account is not the PDA", async () => {
      const b = await tokenCreation(conn, payer, { metadata: Keypair.generate().publicKey });
      await expectAtomicFailure(chain, conn, payer, b, [], {
        InstructionError: [4, { Custom: 5 }],
      }, "Program log:  Metadata's key must match seed of ['metadata', program id, mint] provided");
    });

    await t.step("mint authority is not the mint's", async () => {
      const impostor = Keypair.generate();
      const b = await tokenCreation(conn, payer, { metadataMintAuthority: impostor.publicKey });
      await expectAtomicFailure(chain, conn, payer, b, [impostor], {
        InstructionError: [4, { Custom: 10 }],
      }, "Program log: Mint authority provided does not match the authority on the mint");
    });

    await t.step("name longer than 32 bytes", async () => {
      const b = await tokenCreation(conn, payer, { name: "x".repeat(33) });
      await expectAtomicFailure(chain, conn, payer, b, [], {
        InstructionError: [4, { Custom: 11 }],
      }, "Program log: Name too long");
    });

    await t.step("metadata account already exists", async () => {
      const first = await tokenCreation(conn, payer, { revokeMintAuthority: false });
      await conn.sendRawTransaction((await signed(conn, payer, first.ixs)).serialize());
      const again = {
        ...first,
        mint: Keypair.generate().publicKey, // nothing new may appear: checked as absent
        ata: Keypair.generate().publicKey,
        ixs: [first.ixs[4]],
      };
      const before = await conn.getAccountInfo(first.metadata, "processed");
      const tx = await signed(conn, payer, again.ixs);
      const sim = await simulate(conn, tx);
      // As the program deployed on mainnet: its levy refuses an account holding data, before
      // any System Program call.
      assertEquals(sim.value.err, { InstructionError: [0, { Custom: 199 }] });
      assert(
        sim.value.logs!.includes("Program log: Expected account to be uninitialized"),
        sim.value.logs!.join("\n"),
      );
      assert(
        !sim.value.logs!.some((l) => l.startsWith("Program 11111111111111111111111111111111")),
      );
      const balance = await conn.getBalance(payer.publicKey, "processed");
      await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      assertEquals(await conn.getBalance(payer.publicKey, "processed"), balance - 5000);
      const after = await conn.getAccountInfo(first.metadata, "processed");
      assertEquals(after?.lamports, before?.lamports);
      assertEquals(after?.data, before?.data);
    });
  } finally {
    await chain.close();
  }
});

Deno.test({
  name: "token metadata (emulated): other instructions of the program are refused",
  // Only the emulation refuses them; the real program (TOKEN_METADATA_PROGRAM_SO) runs them.
  ignore: !!Deno.env.get("TOKEN_METADATA_PROGRAM_SO"),
}, async () => {
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = await funded(chain);
    const program = await conn.getAccountInfo(TOKEN_METADATA_PROGRAM_ID, "processed");
    assert(program?.executable);
    const tx = await signed(conn, payer, [{
      programId: TOKEN_METADATA_PROGRAM_ID,
      keys: [{ pubkey: payer.publicKey, isSigner: true, isWritable: true }],
      // Verify (52): neither CreateMetadataAccountV3 nor UpdateMetadataAccountV2, the two emulated.
      data: Buffer.from([52]),
    }]);
    const sim = await rpc(chain, "simulateTransaction", [
      tx.serialize().toString("base64"),
      { encoding: "base64" },
    ]);
    const value = (sim.body.result as { value: { err: unknown; logs: string[] } }).value;
    assertEquals(value.err, { InstructionError: [0, "UnsupportedProgramId"] });
    assert(value.logs.some((l) => l.includes("not supported")), value.logs.join("\n"));
    assertEquals(await conn.getBalance(payer.publicKey, "processed"), 5 * LAMPORTS_PER_SOL);
  } finally {
    await chain.close();
  }
});

Deno.test("token creation: compute unit limit is enforced across the whole transaction", async () => {
  const { ComputeBudgetProgram } = await import("@solana/web3.js");
  const chain = await start({ slotMs: "manual" });
  try {
    const conn = connect(chain, { manualSlots: true });
    const payer = await funded(chain);
    const b = await tokenCreation(conn, payer);
    const tight = await signed(conn, payer, [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 40_000 }),
      ...b.ixs,
    ]);
    const sim = await simulate(conn, tight);
    const err = sim.value.err as { InstructionError: [number, unknown] };
    assert(err?.InstructionError, JSON.stringify(sim.value.err));
    // Out of compute inside a program is ProgramFailedToComplete, as on mainnet (inside a syscall
    // the real program can also report ComputationalBudgetExceeded).
    assert(
      ["ProgramFailedToComplete", "ComputationalBudgetExceeded"].includes(
        err.InstructionError[1] as string,
      ),
      JSON.stringify(err),
    );
    assert(sim.value.unitsConsumed! <= 40_000);

    const roomy = await signed(conn, payer, [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 150_000 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 10_000 }),
      ...b.ixs,
    ]);
    const before = await conn.getBalance(payer.publicKey, "processed");
    const ok = await simulate(conn, roomy);
    assertEquals(ok.value.err, null);
    assert(
      ok.value.logs![0].startsWith("Program ComputeBudget111111111111111111111111111111 invoke"),
    );
    const sig = await conn.sendRawTransaction(roomy.serialize());
    chain.advanceSlots(1);
    const got = await conn.getTransaction(sig, { commitment: "confirmed" });
    assertEquals(got!.meta!.fee, 5000 + 1500); // + ceil(10_000 µlamports * 150_000 CU / 1e6)
    assertEquals(got!.meta!.preBalances[0] - got!.meta!.postBalances[0] > 1500, true);
    assert(before > (await conn.getBalance(payer.publicKey, "processed")));
  } finally {
    await chain.close();
  }
});
