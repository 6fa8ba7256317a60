/**
 * The token-creation transaction, built without any I/O: given addresses, amounts and a
 * blockhash it returns the exact legacy message the payer is asked to sign.
 *
 * Only the payer signs. The mint lives at createWithSeed(payer, seed, Token program), so no mint
 * keypair exists that the service (or anyone) would have to hold, and the payer as the seed's
 * base is the signer the System program asks for. The account is funded and then allocated
 * (mint-account.ts), so lamports someone sends to the address first cannot make the build fail.
 */
import {
  ComputeBudgetProgram,
  type Message,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import {
  createInitializeMint2Instruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { createMetadataAccountV3Instruction, metadataPda } from "../solana/token-metadata.ts";
import { mintAccountFor, revokeMintInstructions, supplyInstructions } from "./mint-steps.ts";
import type { TokenSpec } from "./token-spec.ts";
import { token2022Instructions, type Token2022Sizes, type TransferFeeSpec } from "./token-2022.ts";
import { ADVANCE_NONCE_TAG, advanceNonce } from "./nonce.ts";

/** Which token program owns the mint: the classic one (Metaplex metadata) or Token-2022. */
export type TokenProgramName = "spl-token" | "token-2022";

export const tokenProgramId = (p: TokenProgramName = "spl-token"): PublicKey =>
  p === "token-2022" ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;

/** The runtime's ceiling; used while simulating so the simulation never runs out of units. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** createWithSeed takes at most 32 bytes of seed. */
export const SEED_LENGTH = 32;

/** 16 random bytes as 32 hex characters: unguessable, and exactly the seed limit. */
export function newSeed(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SEED_LENGTH / 2));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export interface TokenAddresses {
  mint: PublicKey;
  recipientTokenAccount: PublicKey;
  metadataAccount: PublicKey;
}

export async function deriveAddresses(
  payer: PublicKey,
  seed: string,
  recipient: PublicKey,
  tokenProgram: TokenProgramName = "spl-token",
): Promise<TokenAddresses> {
  const program = tokenProgramId(tokenProgram);
  const mint = await PublicKey.createWithSeed(payer, seed, program);
  return {
    mint,
    // Off-curve owners are let through here; whether one is acceptable is decided by the
    // recipient policy (recipient.ts), which has the account in hand.
    recipientTokenAccount: getAssociatedTokenAddressSync(mint, recipient, true, program),
    // Token-2022: the metadata lives in the mint itself (MetadataPointer points at it).
    metadataAccount: tokenProgram === "token-2022" ? mint : metadataPda(mint),
  };
}

export interface TokenPlan extends TokenAddresses, TokenSpec {
  reference: PublicKey;
  treasury: PublicKey;
  feeLamports: bigint;
  /** Absent: "spl-token". */
  tokenProgram?: TokenProgramName;
  /** Token-2022 only. */
  transferFee?: TransferFeeSpec | null;
  /** Token-2022 only: the mint's sizes, as the rent was computed for them. */
  token2022Sizes?: Token2022Sizes;
  /** A durable nonce account of the payer's: the message begins by advancing it. */
  nonceAccount?: PublicKey | null;
}

export interface ComputeBudget {
  unitLimit: number;
  microLamportsPerUnit: bigint;
}

/**
 * The instructions, in the order the contract lists them. On a durable nonce, AdvanceNonceAccount
 * comes first, as the runtime requires of a nonce transaction (the one change of order).
 */
export function tokenInstructions(p: TokenPlan, budget: ComputeBudget): TransactionInstruction[] {
  const ixs: TransactionInstruction[] = [
    ...(p.nonceAccount ? [advanceNonce(p.nonceAccount, p.payer)] : []),
    ComputeBudgetProgram.setComputeUnitLimit({ units: budget.unitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: budget.microLamportsPerUnit }),
  ];
  if (p.tokenProgram === "token-2022") {
    ixs.push(...token2022Instructions({ ...p, transferFee: p.transferFee ?? null }));
  } else ixs.push(...splTokenInstructions(p));
  ixs.push(feeTransfer(p.payer, p.treasury, p.feeLamports, p.reference));
  return ixs;
}

/** Our fee, last: a transfer to the treasury carrying the read-only reference key it is found by. */
export function feeTransfer(
  from: PublicKey,
  treasury: PublicKey,
  lamports: bigint,
  reference: PublicKey,
): TransactionInstruction {
  const fee = SystemProgram.transfer({ fromPubkey: from, toPubkey: treasury, lamports });
  fee.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
  return fee;
}

/** The classic program's mint with a Metaplex metadata account. */
function splTokenInstructions(p: TokenPlan): TransactionInstruction[] {
  const ixs: TransactionInstruction[] = [
    ...mintAccountFor(p, MINT_SIZE, TOKEN_PROGRAM_ID),
    createInitializeMint2Instruction(p.mint, p.decimals, p.payer, freezeAuthorityOf(p)),
    ...supplyInstructions(p, TOKEN_PROGRAM_ID),
    createMetadataAccountV3Instruction({
      metadata: p.metadataAccount,
      mint: p.mint,
      mintAuthority: p.payer,
      payer: p.payer,
      updateAuthority: p.updateAuthority ? new PublicKey(p.updateAuthority) : p.payer,
      name: p.name,
      symbol: p.symbol,
      uri: p.uri,
      isMutable: !p.immutableMetadata,
    }),
  ];
  // After the metadata: the program requires the mint authority's signature to create it.
  ixs.push(...revokeMintInstructions(p, TOKEN_PROGRAM_ID));
  return ixs;
}

/** The freeze authority the mint starts with: handed over, revoked (none) or the payer's. */
function freezeAuthorityOf(p: TokenPlan): PublicKey | null {
  if (p.freezeAuthority) return new PublicKey(p.freezeAuthority);
  return p.revokeFreeze ? null : p.payer;
}

export interface CompiledToken {
  message: Message;
  /** The exact bytes the payer signs; their SHA-256 identifies the build. */
  messageBytes: Uint8Array;
  /** Wire form with one all-zero signature slot, as wallets expect an unsigned transaction. */
  transaction: VersionedTransaction;
}

export function compileToken(
  p: TokenPlan,
  budget: ComputeBudget,
  blockhash: string,
): CompiledToken {
  const message = new TransactionMessage({
    payerKey: p.payer,
    recentBlockhash: blockhash,
    instructions: tokenInstructions(p, budget),
  }).compileToLegacyMessage();
  return {
    message,
    messageBytes: message.serialize(),
    transaction: new VersionedTransaction(message),
  };
}

export function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/**
 * `compiled` with other compute-budget values and another blockhash, by rewriting those bytes of
 * its message: the same as compiling again (pinned by tests/tokens/unit.test.ts), at a fraction of
 * the cost, and by construction different from the simulated transaction in nothing else. The
 * layout cannot move: the two compute-budget instructions come first (after AdvanceNonceAccount
 * on a durable nonce) and their data has a fixed size (SetComputeUnitLimit: tag 2 + u32;
 * SetComputeUnitPrice: tag 3 + u64, little-endian).
 */
export function retarget(
  compiled: CompiledToken,
  budget: ComputeBudget,
  blockhash: string,
): { messageBytes: Uint8Array; wire: Uint8Array } {
  const m = compiled.messageBytes.slice();
  const view = new DataView(m.buffer, m.byteOffset, m.byteLength);
  let at = 3; // the header: signatures, read-only signed, read-only unsigned
  const compactU16 = () => {
    let value = 0;
    for (let shift = 0;; shift += 7) {
      const b = m[at++];
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value;
    }
  };
  const keyCount = compactU16();
  const keysStart = at;
  at += 32 * keyCount;
  m.set(new PublicKey(blockhash).toBytes(), at);
  at += 32;
  compactU16(); // instruction count
  const budgetProgram = ComputeBudgetProgram.programId.toBytes();
  const systemProgram = SystemProgram.programId.toBytes();
  // A durable nonce's AdvanceNonceAccount (System, 4-byte tag) goes before the budget: skipped.
  const skipAdvanceNonce = () => {
    const start = at;
    const program = m[at++];
    const programKey = m.subarray(keysStart + 32 * program, keysStart + 32 * program + 32);
    const accounts = compactU16();
    at += accounts;
    const length = compactU16();
    const advance = programKey.every((b, i) => b === systemProgram[i]) && length === 4 &&
      view.getUint32(at, true) === ADVANCE_NONCE_TAG;
    if (advance) at += length;
    else at = start;
  };
  skipAdvanceNonce();
  const rewrite = (tag: number, size: number, write: (dataAt: number) => void) => {
    const program = m[at++];
    const programKey = m.subarray(keysStart + 32 * program, keysStart + 32 * program + 32);
    const accounts = compactU16(); // indexes of the accounts it takes (none)
    at += accounts;
    const length = compactU16();
    if (!programKey.every((b, i) => b === budgetProgram[i]) || length !== size || m[at] !== tag) {
      throw new Error(`retarget: instruction with tag ${tag} is not where the layout puts it`);
    }
    write(at + 1);
    at += length;
  };
  rewrite(2, 5, (i) => view.setUint32(i, budget.unitLimit, true));
  rewrite(3, 9, (i) => view.setBigUint64(i, budget.microLamportsPerUnit, true));
  // The unsigned wire form: one all-zero signature, then the message.
  const wire = new Uint8Array(1 + 64 + m.length);
  wire[0] = 1;
  wire.set(m, 65);
  return { messageBytes: m, wire };
}
