/**
 * Differential tests: the same token-creation transactions, with the same keys, run on the chain
 * emulating the Token Metadata program and on the chain running the program as deployed on
 * mainnet (`../shared/fixtures/mpl_token_metadata.so`); balances, account bytes, error codes and
 * log lines must agree, and compute use must stay in the emulation's documented band above the
 * real figure (docs/chain.md). Skipped, with one line, where the program dump is absent.
 */
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey as Key,
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
import { assert, assertEquals } from "../support/assert.ts";
import { METAPLEX_SO, needsMetaplexSo } from "../support/metaplex-fixture.ts";
import {
  createMetadataAccountV3Instruction,
  MAX_METADATA_LEN,
  metadataPda,
  TOKEN_METADATA_PROGRAM_ID,
} from "../../src/solana/token-metadata.ts";
import type { EmbeddedChain } from "../../src/chain/mod.ts";
import { connect, signed, simulate, start } from "./helpers.ts";
import { CU_EMULATION_BAND } from "../../src/chain/token-metadata-program.ts";

const META = TOKEN_METADATA_PROGRAM_ID.toBase58();
const TREASURY = Keypair.generate().publicKey;
const TREASURY_LAMPORTS = 1_000_000n;

interface Flow {
  name: string;
  /** Lamports the payer starts with; default 5 SOL. */
  funding?: bigint;
  /** Or: exactly what the transaction spends, plus this (negative: short). */
  spendPlus?: bigint;
  /** Or: exactly enough up to the metadata program's levy, minus one lamport. */
  shortAtLevy?: boolean;
  uri?: string;
  /** The error the real program lands with (null: success). */
  expect?: unknown;
  /** The payer's balance after it, where it matters. */
  payerAfter?: number;
  decimals?: number;
  supply?: bigint;
  revoke?: boolean;
  name_?: string;
  mutable?: boolean;
  unitLimit?: number;
  metadata?: "pda" | "other";
  mintAuthority?: "payer" | "impostor";
  /** Creates the metadata first, then runs only the metadata instruction again. */
  existing?: boolean;
  /** Sends without preflight, so a failure lands and charges the fee. */
  land?: boolean;
}

/** The whole creation, for fixed keys, so both chains see byte-identical instructions. */
async function creation(
  payer: Keypair,
  seedTag: string,
  f: Flow,
  mintRent: number,
  impostor: Keypair,
) {
  const seed = `diff-${seedTag}`;
  const mint = await Key.createWithSeed(payer.publicKey, seed, TOKEN_PROGRAM_ID);
  const ata = getAssociatedTokenAddressSync(mint, payer.publicKey);
  const metadata = f.metadata === "other" ? impostor.publicKey : metadataPda(mint);
  const ixs: TransactionInstruction[] = [];
  if (f.unitLimit) ixs.push(ComputeBudgetProgram.setComputeUnitLimit({ units: f.unitLimit }));
  ixs.push(
    SystemProgram.createAccountWithSeed({
      fromPubkey: payer.publicKey,
      basePubkey: payer.publicKey,
      seed,
      newAccountPubkey: mint,
      lamports: mintRent,
      space: MINT_SIZE,
      programId: TOKEN_PROGRAM_ID,
    }),
    createInitializeMint2Instruction(mint, f.decimals ?? 6, payer.publicKey, null),
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint),
    createMintToInstruction(mint, ata, payer.publicKey, f.supply ?? 1_000_000n),
    createMetadataAccountV3Instruction({
      metadata,
      mint,
      mintAuthority: f.mintAuthority === "impostor" ? impostor.publicKey : payer.publicKey,
      payer: payer.publicKey,
      updateAuthority: payer.publicKey,
      name: f.name_ ?? "Twin Coin",
      symbol: "TWIN",
      uri: f.uri ?? "https://example.test/m/twin.json",
      isMutable: f.mutable ?? true,
    }),
  );
  if (f.revoke) {
    ixs.push(createSetAuthorityInstruction(mint, payer.publicKey, AuthorityType.MintTokens, null));
  }
  ixs.push(
    SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: TREASURY,
      lamports: Number(TREASURY_LAMPORTS),
    }),
  );
  return { mint, ata, metadata, ixs };
}

/** What a client can see of one run. */
interface Seen {
  err: unknown;
  logs: string[];
  metadataUnits: number | null;
  payerDelta: number;
  payerAfter: number;
  metadataAccount: { lamports: number; owner: string; data: string } | null;
  innerCount: number[];
}

/** Compute figures differ by design; everything else in a log line must match. */
const maskUnits = (l: string) =>
  l.replace(/ consumed \d+ of \d+ compute units$/, " consumed N of M compute units");

async function run(
  chain: EmbeddedChain,
  f: Flow,
  seedTag: string,
  payer: Keypair,
  impostor: Keypair,
): Promise<Seen> {
  const conn = connect(chain, { manualSlots: true });
  const mintRent = await conn.getMinimumBalanceForRentExemption(MINT_SIZE);
  const rent = async (n: number) => BigInt(await conn.getMinimumBalanceForRentExemption(n));
  // Up to the levy: the fee, the mint's and the token account's rent, then the levy itself
  // (metadata rent + protocol fee, as the program computes it from the chain's rent).
  const toLevy = 5_000n + BigInt(mintRent) + await rent(165) + await rent(MAX_METADATA_LEN) +
    await rent(1308) + 5_440n;
  const funding = f.shortAtLevy
    ? toLevy - 1n
    : f.spendPlus !== undefined
    ? toLevy + TREASURY_LAMPORTS + f.spendPlus
    : f.funding ?? 5_000_000_000n;
  chain.airdrop(payer.publicKey.toBase58(), funding);
  const b = await creation(payer, seedTag, f, mintRent, impostor);
  const extra = f.mintAuthority === "impostor" ? [impostor] : [];
  let ixs = b.ixs;
  if (f.existing) {
    await conn.sendRawTransaction((await signed(conn, payer, ixs, extra)).serialize());
    chain.advanceSlots(1);
    ixs = ixs.filter((ix) => ix.programId.equals(TOKEN_METADATA_PROGRAM_ID));
  }
  const before = await conn.getBalance(payer.publicKey, "processed");
  const tx = await signed(conn, payer, ixs, extra);
  const sim = await simulate(conn, tx);
  let logs = sim.value.logs ?? [];
  let err: unknown = sim.value.err;
  let innerCount: number[] = [];
  if (err === null || f.land) {
    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: !!f.land });
    chain.advanceSlots(1);
    const got = await conn.getTransaction(sig, { commitment: "confirmed" });
    logs = got!.meta!.logMessages!;
    err = got!.meta!.err;
    innerCount = (got!.meta!.innerInstructions ?? []).map((g) => g.instructions.length);
  }
  const consumed = logs.find((l) => l.startsWith(`Program ${META} consumed`));
  const after = await conn.getBalance(payer.publicKey, "processed");
  const acc = await conn.getAccountInfo(b.metadata, "processed");
  return {
    err,
    logs: logs.map(maskUnits),
    metadataUnits: consumed ? Number(consumed.split(" ")[3]) : null,
    payerDelta: before - after,
    payerAfter: after,
    metadataAccount: acc && {
      lamports: acc.lamports,
      owner: acc.owner.toBase58(),
      data: acc.data.toString("hex"),
    },
    innerCount,
  };
}

function seed32(text: string): Uint8Array {
  const out = new Uint8Array(32);
  new TextEncoder().encode(text).forEach((b, i) => out[i % 32] = (out[i % 32] * 31 + b) & 0xff);
  return out;
}

/**
 * Running out of compute inside a syscall is ComputationalBudgetExceeded, between two BPF
 * instructions ProgramFailedToComplete; where exactly a program runs out is not emulated, so
 * the two count as one.
 */
function outOfCompute(seen: Seen): Seen {
  const norm = (e: unknown): unknown => {
    const ie = (e as { InstructionError?: [number, unknown] } | null)?.InstructionError;
    return ie && (ie[1] === "ProgramFailedToComplete" || ie[1] === "ComputationalBudgetExceeded")
      ? { InstructionError: [ie[0], "out of compute"] }
      : e;
  };
  return {
    ...seen,
    err: norm(seen.err),
    logs: seen.logs.map((l) =>
      l.replace(
        / failed: (exceeded CUs meter at BPF instruction|Computational budget exceeded)$/,
        " failed: out of compute",
      )
    ),
  };
}

const ix = (i: number, e: unknown) => ({ InstructionError: [i, e] });
const FLOWS: Flow[] = [
  { name: "create, decimals 0, revoke on, immutable", decimals: 0, revoke: true, mutable: false },
  { name: "create, decimals 9, revoke off, mutable", decimals: 9, revoke: false },
  { name: "create, decimals 9, supply u64::MAX", decimals: 9, supply: 2n ** 64n - 1n },
  { name: "create, decimals 1, a 32-byte name", decimals: 1, name_: "N".repeat(32) },
  {
    name: "metadata account already exists",
    existing: true,
    land: true,
    expect: ix(0, { Custom: 199 }),
  },
  {
    name: "metadata account is not the PDA",
    metadata: "other",
    land: true,
    expect: ix(4, { Custom: 5 }),
  },
  {
    name: "mint authority is not the mint's",
    mintAuthority: "impostor",
    land: true,
    expect: ix(4, { Custom: 10 }),
  },
  {
    name: "name longer than 32 bytes",
    name_: "x".repeat(33),
    land: true,
    expect: ix(4, { Custom: 11 }),
  },
  {
    name: "out of compute inside the metadata instruction",
    unitLimit: 45_000,
    land: true,
    expect: ix(5, "out of compute"),
  },
  {
    name: "out of compute at the levy",
    unitLimit: 21_000,
    land: true,
    expect: ix(5, "out of compute"),
  },
  {
    name: "spend to zero: funded with exactly the spend, it lands at 0",
    spendPlus: 0n,
    payerAfter: 0,
  },
  {
    name: "spend to zero less one lamport: the last transfer fails",
    spendPlus: -1n,
    land: true,
    expect: ix(5, { Custom: 1 }),
  },
  {
    name: "one lamport over the spend: the payer may not end below rent",
    spendPlus: 1n,
    land: true,
    expect: { InsufficientFundsForRent: { account_index: 0 } },
  },
  {
    name: "short at the levy: the program's transfer fails",
    shortAtLevy: true,
    land: true,
    expect: ix(4, { Custom: 1 }),
  },
  // Compute use across mints (bumps) and string lengths.
  ...Array.from({ length: 24 }, (_, k): Flow => ({
    name: `compute use, mint ${k}`,
    decimals: k % 10,
    name_: "n".repeat((k * 5) % 33),
    uri: "https://example.test/" + "u".repeat((k * 37) % 170),
  })),
];

Deno.test({
  name: "differential: emulated and real Token Metadata program agree, flow by flow",
  ...needsMetaplexSo(),
  fn: async (t) => {
    const emulated = await start({ slotMs: "manual" });
    const real = await start({ slotMs: "manual", tokenMetadataProgramSo: METAPLEX_SO! });
    try {
      let i = 0;
      for (const f of FLOWS) {
        await t.step(f.name, async () => {
          const tag = `${i++}`;
          // Fixed keys: the same mints (and so the same PDA searches) on every run.
          const payer = Keypair.fromSeed(seed32(`payer ${f.name}`));
          const impostor = Keypair.fromSeed(seed32(`impostor ${f.name}`));
          const norm = f.unitLimit ? outOfCompute : (x: Seen) => x;
          const e = norm(await run(emulated, f, tag, payer, impostor));
          const r = norm(await run(real, f, tag, payer, impostor));
          if (Deno.env.get("DIFF_DEBUG")) console.log(JSON.stringify({ e, r }, null, 1));
          const { metadataUnits: eu, ...eRest } = e;
          const { metadataUnits: ru, ...rRest } = r;
          assertEquals(r.err, f.expect ?? null);
          if (f.payerAfter !== undefined) assertEquals(r.payerAfter, f.payerAfter);
          assertEquals(eRest, rRest);
          if (ru !== null && eu !== null && r.err === null) {
            assert(eu >= ru && eu - ru <= CU_EMULATION_BAND, `emulated ${eu} CU, real ${ru} CU`);
          } else if (ru !== null && eu !== null) {
            assert(Math.abs(eu - ru) <= CU_EMULATION_BAND, `emulated ${eu} CU, real ${ru} CU`);
          }
          if (r.err === null) {
            assertEquals(r.metadataAccount!.data.length, 2 * MAX_METADATA_LEN);
          }
        });
      }
    } finally {
      await emulated.close();
      await real.close();
    }
  },
});
