/**
 * A test stablecoin for the embedded chain (`STABLECOIN_MINT=local`): a 6-decimal SPL Token mint at
 * a fixed address with a fixed, public mint authority, so the service creates it at start and
 * `deno task dev:key` can fund a wallet with it, and the stablecoin path can be tried locally.
 * Both keys are derived from public labels: this mint is worth nothing and exists on a local chain
 * only (the configuration refuses `local` off localnet).
 */
import {
  type Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToCheckedInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { waitConfirmed } from "../solana/wait-confirmed.ts";

export const LOCAL_STABLECOIN_DECIMALS = 6;

const derived = async (label: string) =>
  Keypair.fromSeed(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(label))),
  );

export async function localStablecoinKeys(): Promise<{ mint: Keypair; authority: Keypair }> {
  return {
    mint: await derived("token-creation-service local test stablecoin mint"),
    authority: await derived("token-creation-service local test stablecoin authority"),
  };
}

/** Sends and waits until confirmed. */
async function send(
  connection: Connection,
  payer: Keypair,
  signers: Keypair[],
  ixs: TransactionInstruction[],
) {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash("confirmed");
  const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight });
  tx.add(...ixs).sign(payer, ...signers);
  const sig = await connection.sendRawTransaction(tx.serialize());
  await waitConfirmed(connection, sig);
}

async function fundedAuthority(connection: Connection, authority: Keypair) {
  if ((await connection.getBalance(authority.publicKey, "confirmed")) < LAMPORTS_PER_SOL / 10) {
    await waitConfirmed(
      connection,
      await connection.requestAirdrop(authority.publicKey, LAMPORTS_PER_SOL),
    );
  }
}

/**
 * A test mint on a local chain: `mint` and `authority` (both signers), `decimals`, owned by
 * `programId` (SPL Token or Token-2022). Tests make Token-2022 ones with it.
 */
export async function createTestMint(
  connection: Connection,
  opts: { mint: Keypair; authority: Keypair; decimals: number; programId?: PublicKey },
): Promise<PublicKey> {
  const programId = opts.programId ?? TOKEN_PROGRAM_ID;
  await fundedAuthority(connection, opts.authority);
  const lamports = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
  await send(connection, opts.authority, [opts.mint], [
    SystemProgram.createAccount({
      fromPubkey: opts.authority.publicKey,
      newAccountPubkey: opts.mint.publicKey,
      lamports,
      space: MINT_SIZE,
      programId,
    }),
    createInitializeMint2Instruction(
      opts.mint.publicKey,
      opts.decimals,
      opts.authority.publicKey,
      null,
      programId,
    ),
  ]);
  return opts.mint.publicKey;
}

/** The local test stablecoin, created on this chain unless it is there already. */
export async function ensureLocalStablecoin(connection: Connection): Promise<PublicKey> {
  const { mint, authority } = await localStablecoinKeys();
  if (await connection.getAccountInfo(mint.publicKey, "confirmed")) return mint.publicKey;
  return await createTestMint(connection, {
    mint,
    authority,
    decimals: LOCAL_STABLECOIN_DECIMALS,
  });
}

/** Mints `units` base units of a test mint to `owner`'s associated token account. */
export async function fundTestMint(
  connection: Connection,
  opts: {
    mint: PublicKey;
    authority: Keypair;
    decimals: number;
    owner: PublicKey;
    units: bigint;
    programId?: PublicKey;
  },
): Promise<PublicKey> {
  const programId = opts.programId ?? TOKEN_PROGRAM_ID;
  await fundedAuthority(connection, opts.authority);
  const ata = getAssociatedTokenAddressSync(opts.mint, opts.owner, true, programId);
  await send(connection, opts.authority, [], [
    createAssociatedTokenAccountIdempotentInstruction(
      opts.authority.publicKey,
      ata,
      opts.owner,
      opts.mint,
      programId,
    ),
    createMintToCheckedInstruction(
      opts.mint,
      ata,
      opts.authority.publicKey,
      opts.units,
      opts.decimals,
      [],
      programId,
    ),
  ]);
  return ata;
}

/** Funds `owner` with the local test stablecoin (`dev:key`). */
export async function fundLocalStablecoin(
  connection: Connection,
  owner: PublicKey,
  units: bigint,
): Promise<PublicKey> {
  const { mint, authority } = await localStablecoinKeys();
  return await fundTestMint(connection, {
    mint: mint.publicKey,
    authority,
    decimals: LOCAL_STABLECOIN_DECIMALS,
    owner,
    units,
  });
}
