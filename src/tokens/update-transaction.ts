/**
 * The update transaction, built without any I/O: the changes decided (update-decide.ts) as
 * instructions for the current authority, who is the one signer and the fee payer.
 *
 * - Classic mint: one Metaplex UpdateMetadataAccountV2 for the text, the update authority and
 *   immutability (the program applies the data first, then flips is_mutable), SetAuthority for
 *   the mint and freeze authorities.
 * - Token-2022: the metadata lives in the mint, so a longer field grows the mint, and the program
 *   does not fund that: a System transfer to the mint tops its lamports up to the new size's
 *   rent-exempt minimum first (the runtime refuses an account left below it). Then an UpdateField
 *   per changed field, UpdateAuthority (and the metadata pointer's authority with it, when the
 *   signer holds it), SetAuthority for the mint and freeze authorities.
 *
 * Last, when updates carry a fee, the transfer to the treasury with its read-only reference key,
 * as a build's.
 */
import {
  ComputeBudgetProgram,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import {
  AuthorityType,
  createSetAuthorityInstruction,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import {
  createUpdateAuthorityInstruction,
  createUpdateFieldInstruction,
  Field,
} from "@solana/spl-token-metadata";
import { updateMetadataAccountV2Instruction } from "../solana/token-metadata-update.ts";
import {
  type CompiledToken,
  type ComputeBudget,
  feeTransfer,
  tokenProgramId,
} from "./transaction.ts";
import type { UpdateChanges } from "./update-decide.ts";
import type { TokenState } from "./update-state.ts";

export interface UpdatePlan {
  mint: PublicKey;
  authority: PublicKey;
  state: TokenState;
  changes: UpdateChanges;
  /** Token-2022: lamports the mint needs for its new size (0: none). */
  rentTopUpLamports: bigint;
  treasury: PublicKey;
  /** Marks the fee transfer; null when there is no fee. */
  reference: PublicKey | null;
  feeLamports: bigint;
}

const utf8 = (s: string) => new TextEncoder().encode(s).length;

/**
 * The mint's data length after the text changes: TokenMetadata stores each string as a u32
 * length and its UTF-8 bytes, so the TLV entry grows or shrinks by the difference in bytes (the
 * update authority is 32 bytes whoever or nobody holds it).
 */
export function token2022LengthAfter(state: TokenState, changes: UpdateChanges): number {
  if (!changes.metadata) return state.mintDataLength;
  const b = changes.before;
  const a = changes.metadata;
  return state.mintDataLength + utf8(a.name) - utf8(b.name) + utf8(a.symbol) - utf8(b.symbol) +
    utf8(a.uri) - utf8(b.uri);
}

/** What the mint must receive to stay rent-exempt at its new length (0: it holds enough). */
export function rentTopUp(state: TokenState, minimumAt: bigint): bigint {
  return minimumAt > state.mintLamports ? minimumAt - state.mintLamports : 0n;
}

export function updateInstructions(p: UpdatePlan, budget: ComputeBudget): TransactionInstruction[] {
  const ixs: TransactionInstruction[] = [
    ComputeBudgetProgram.setComputeUnitLimit({ units: budget.unitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: budget.microLamportsPerUnit }),
  ];
  if (p.state.tokenProgram === "token-2022") ixs.push(...token2022Updates(p));
  else ixs.push(...metaplexUpdates(p));
  ixs.push(...authorityUpdates(p));
  if (p.feeLamports > 0n && p.reference) {
    ixs.push(feeTransfer(p.authority, p.treasury, p.feeLamports, p.reference));
  }
  return ixs;
}

function metaplexUpdates(p: UpdatePlan): TransactionInstruction[] {
  const c = p.changes;
  if (!c.metadata && !c.updateAuthority && !c.makeImmutable) return [];
  return [updateMetadataAccountV2Instruction({
    mint: p.mint,
    updateAuthority: p.authority,
    data: c.metadata,
    newUpdateAuthority: c.updateAuthority ? new PublicKey(c.updateAuthority) : null,
    isMutable: c.makeImmutable ? false : null,
  })];
}

function token2022Updates(p: UpdatePlan): TransactionInstruction[] {
  const c = p.changes;
  const programId = TOKEN_2022_PROGRAM_ID;
  const ixs: TransactionInstruction[] = [];
  if (p.rentTopUpLamports > 0n) {
    ixs.push(SystemProgram.transfer({
      fromPubkey: p.authority,
      toPubkey: p.mint,
      lamports: p.rentTopUpLamports,
    }));
  }
  if (c.metadata) {
    const fields = [[Field.Name, "name"], [Field.Symbol, "symbol"], [Field.Uri, "uri"]] as const;
    for (const [field, key] of fields) {
      if (c.metadata[key] === c.before[key]) continue;
      ixs.push(createUpdateFieldInstruction({
        programId,
        metadata: p.mint,
        updateAuthority: p.authority,
        field,
        value: c.metadata[key],
      }));
    }
  }
  if (c.updateAuthority || c.makeImmutable) {
    const to = c.updateAuthority ? new PublicKey(c.updateAuthority) : null;
    ixs.push(createUpdateAuthorityInstruction({
      programId,
      metadata: p.mint,
      oldAuthority: p.authority,
      newAuthority: to,
    }));
    // Whoever may change the metadata may repoint it: the pointer's authority goes along.
    if (p.state.metadataPointerAuthority === p.authority.toBase58()) {
      ixs.push(
        createSetAuthorityInstruction(
          p.mint,
          p.authority,
          AuthorityType.MetadataPointer,
          to,
          [],
          programId,
        ),
      );
    }
  }
  return ixs;
}

function authorityUpdates(p: UpdatePlan): TransactionInstruction[] {
  const programId = tokenProgramId(p.state.tokenProgram);
  const ixs: TransactionInstruction[] = [];
  const kinds = [
    ["mintAuthority", AuthorityType.MintTokens],
    ["freezeAuthority", AuthorityType.FreezeAccount],
  ] as const;
  for (const [f, type] of kinds) {
    const to = p.changes[f];
    if (to === undefined) continue;
    ixs.push(createSetAuthorityInstruction(
      p.mint,
      p.authority,
      type,
      to === null ? null : new PublicKey(to),
      [],
      programId,
    ));
  }
  return ixs;
}

export function compileUpdate(
  p: UpdatePlan,
  budget: ComputeBudget,
  blockhash: string,
): CompiledToken {
  const message = new TransactionMessage({
    payerKey: p.authority,
    recentBlockhash: blockhash,
    instructions: updateInstructions(p, budget),
  }).compileToLegacyMessage();
  return {
    message,
    messageBytes: message.serialize(),
    transaction: new VersionedTransaction(message),
  };
}
