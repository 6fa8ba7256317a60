/**
 * The steps every build takes whichever token program owns the mint: the mint account at its
 * seeded address, the recipient's account with the whole supply, and the optional revoke.
 * transaction.ts (classic program) and token-2022.ts put them around their own metadata steps.
 */
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";
import {
  AuthorityType,
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  createSetAuthorityInstruction,
} from "@solana/spl-token";
import { mintAccountInstructions } from "./mint-account.ts";
import type { TokenSpec } from "./token-spec.ts";

type MintPlan = TokenSpec & { mint: PublicKey; recipientTokenAccount: PublicKey };

/** The mint account, funded with its rent and allocated at `space`, owned by `program`. */
export const mintAccountFor = (
  p: MintPlan,
  space: number,
  program: PublicKey,
): TransactionInstruction[] =>
  mintAccountInstructions({
    payer: p.payer,
    mint: p.mint,
    seed: p.seed,
    lamports: p.mintRentLamports,
    space,
    tokenProgram: program,
  });

/** The recipient's associated token account (idempotent), then the whole supply minted to it. */
export const supplyInstructions = (p: MintPlan, program: PublicKey): TransactionInstruction[] => [
  createAssociatedTokenAccountIdempotentInstruction(
    p.payer,
    p.recipientTokenAccount,
    p.recipient,
    p.mint,
    program,
  ),
  createMintToInstruction(p.mint, p.recipientTokenAccount, p.payer, p.supplyRaw, [], program),
];

/**
 * The mint authority given up, or handed to another address, when asked: last, since minting the
 * supply and creating the metadata need the payer to hold it.
 */
export const revokeMintInstructions = (
  p: MintPlan,
  program: PublicKey,
): TransactionInstruction[] =>
  p.revokeMint || p.mintAuthority
    ? [createSetAuthorityInstruction(
      p.mint,
      p.payer,
      AuthorityType.MintTokens,
      p.mintAuthority ? new PublicKey(p.mintAuthority) : null,
      [],
      program,
    )]
    : [];
