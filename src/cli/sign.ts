/**
 * `deno task sign <base64-transaction> <keypair.json>`: signs a build's unsigned transaction with
 * a Solana CLI keypair file, locally, and prints the signed transaction (base64) on stdout, for
 * the README's curl walk-through. Before signing it decodes every instruction and prints them on
 * stderr; it refuses (exit 1) a transaction your key is not the only signer of, or one with a
 * program or instruction a token creation does not use. The amounts it shows are the
 * transaction's own: compare them with what you asked for (examples/create-token.ts checks them
 * against the request for you).
 */
import {
  PublicKey,
  SystemInstruction,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import {
  AuthorityType,
  decodeInitializeTransferFeeConfigInstruction,
  decodeInstruction,
  isMintToInstruction,
  isSetAuthorityInstruction,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { Buffer } from "node:buffer";
import { type Expectation, loadKeypair, reviewTransaction } from "../../examples/create-token.ts";

const USAGE = "usage: deno task sign <base64-transaction> <keypair.json>";
/** Token-2022's InitializeTransferFeeConfig: extension tag 26, sub-tag 0. */
const isTransferFeeConfig = (ix: TransactionInstruction) =>
  ix.programId.equals(TOKEN_2022_PROGRAM_ID) && ix.data[0] === 26 && ix.data[1] === 0;

/**
 * What the transaction itself says it does, as an expectation for `reviewTransaction`: the mint
 * it allocates, the one SOL transfer that is not the mint's rent (the fee), the supply it mints.
 * Only the signer is checked against something outside the transaction: your keypair.
 */
export function statedExpectation(tx: Transaction, payer: PublicKey): Expectation {
  const system = tx.instructions.filter((ix) => ix.programId.equals(SystemProgram.programId));
  const allocate = system.find((ix) =>
    SystemInstruction.decodeInstructionType(ix) === "AllocateWithSeed"
  );
  const mint = allocate ? SystemInstruction.decodeAllocateWithSeed(allocate) : undefined;
  const tokenProgram = mint?.programId.equals(TOKEN_2022_PROGRAM_ID) ? "token-2022" : "spl-token";
  const fee = system
    .filter((ix) => SystemInstruction.decodeInstructionType(ix) === "Transfer")
    .map((ix) => SystemInstruction.decodeTransfer(ix))
    .find((t) => !mint || !t.toPubkey.equals(mint.accountPubkey));
  const programId = tokenProgram === "token-2022" ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;
  let supplyRaw = 0n;
  let revokeMint = false;
  for (const ix of tx.instructions.filter((i) => i.programId.equals(programId))) {
    if (isTransferFeeConfig(ix)) continue;
    try {
      const d = decodeInstruction(ix, programId);
      if (isMintToInstruction(d)) supplyRaw += BigInt(d.data.amount);
      if (isSetAuthorityInstruction(d)) {
        revokeMint ||= d.data.authorityType === AuthorityType.MintTokens &&
          d.data.newAuthority === null;
      }
    } catch { /* not a base instruction (an extension's): reviewTransaction names it */ }
  }
  const feeConfig = tx.instructions.find(isTransferFeeConfig);
  const transferFee = feeConfig
    ? decodeInitializeTransferFeeConfigInstruction(feeConfig, TOKEN_2022_PROGRAM_ID).data
    : undefined;
  return {
    payer: payer.toBase58(),
    mint: mint?.accountPubkey.toBase58() ?? "",
    supplyRaw,
    feeLamports: BigInt(fee?.lamports ?? 0),
    treasury: fee?.toPubkey.toBase58() ?? "",
    revokeMint,
    tokenProgram,
    transferFee: transferFee
      ? {
        basisPoints: transferFee.transferFeeBasisPoints,
        maximum: transferFee.maximumFee,
        authority: transferFee.transferFeeConfigAuthority?.toBase58() ?? null,
      }
      : null,
  };
}

if (import.meta.main) {
  const [transaction, keypairPath] = Deno.args;
  if (!transaction || !keypairPath || Deno.args.length !== 2) {
    console.error(USAGE);
    Deno.exit(2);
  }
  try {
    const payer = await loadKeypair(keypairPath);
    const tx = Transaction.from(Buffer.from(transaction, "base64"));
    const want = statedExpectation(tx, payer.publicKey);
    const review = reviewTransaction(tx, want);
    console.error(`signing as ${want.payer}; the transaction:`);
    for (const line of review.lines) console.error(`  ${line}`);
    console.error(
      `  fee to ${want.treasury}: ${want.feeLamports} lamports (the build's fee.lamports and ` +
        `fee.treasury)`,
    );
    if (review.problems.length) {
      throw new Error(`refusing to sign:\n  - ${review.problems.join("\n  - ")}`);
    }
    console.error(
      "submit it within about 60 s of the build (its blockhash expires); after that, refresh " +
        "the build (POST /v1/tokens/{mint}/refresh) and sign the refreshed one",
    );
    tx.sign(payer);
    console.log(tx.serialize().toString("base64"));
  } catch (e) {
    console.error(`sign failed: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
