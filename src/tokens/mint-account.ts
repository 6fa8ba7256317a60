/**
 * The instructions that put a build's mint account at createWithSeed(payer, seed, token program):
 * fund it, then allocate it with the seed, as the ATA program does for the accounts it creates.
 *
 * Not `CreateAccountWithSeed`: the System program refuses to create an account that already holds
 * lamports ("already in use"), and anyone can send lamports to the mint's address, which the
 * signed transaction shows to the relay, the leaders and anyone watching, before it lands. Funding
 * never fails on lamports already there (they stay in the mint, and the payer still transfers
 * exactly the rent-exempt minimum, so `costs` stays exact); allocating needs the base's signature,
 * so the payer is still the only one who can give the address its size and owner.
 *
 * `AllocateWithSeed` also assigns the owner it is given (the System program's allocate-and-assign),
 * so no `AssignWithSeed` follows: it would be a no-op costing 113 bytes of the 1,232.
 */
import { type PublicKey, SystemProgram, type TransactionInstruction } from "@solana/web3.js";

export interface MintAccountPlan {
  /** Funds the account and is the seed's base, the one signer. */
  payer: PublicKey;
  /** createWithSeed(payer, seed, tokenProgram). */
  mint: PublicKey;
  seed: string;
  /** The rent-exempt minimum of `space`, whatever the address already holds. */
  lamports: bigint;
  space: number;
  /** The owner the mint is allocated to: SPL Token or Token-2022. */
  tokenProgram: PublicKey;
}

export function mintAccountInstructions(p: MintAccountPlan): TransactionInstruction[] {
  return [
    SystemProgram.transfer({ fromPubkey: p.payer, toPubkey: p.mint, lamports: p.lamports }),
    SystemProgram.allocate({
      accountPubkey: p.mint,
      basePubkey: p.payer,
      seed: p.seed,
      space: p.space,
      programId: p.tokenProgram,
    }),
  ];
}
