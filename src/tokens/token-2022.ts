/**
 * The Token-2022 variant of the creation transaction: the mint carries its own metadata
 * (MetadataPointer pointing at the mint + the TokenMetadata extension) and, optionally, a
 * TransferFeeConfig; there is no Metaplex account and no Metaplex protocol fee.
 *
 * Every layout and size comes from @solana/spl-token (instruction builders, getMintLen,
 * getAccountLen, ExtensionType) and @solana/spl-token-metadata (createInitializeInstruction,
 * pack); this file only orders them and does the rent arithmetic the program requires:
 *
 * - the account is allocated with the space of the fixed-size extensions only (InitializeMint2
 *   refuses a mint whose data is longer than its extensions fill: the TokenMetadata TLV entry
 *   is appended by the TokenMetadata instruction itself, which reallocs the account), but
 *   funded for its FINAL size, since the realloc takes no lamports from anyone and
 *   the runtime refuses an account left below its rent-exempt minimum;
 * - the recipient's associated token account carries the extensions the mint requires of
 *   accounts (ImmutableOwner always, TransferFeeAmount with a transfer fee), so its rent is for
 *   that size, not for a classic 165-byte account.
 */
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";
import {
  createInitializeMetadataPointerInstruction,
  createInitializeMint2Instruction,
  createInitializeTransferFeeConfigInstruction,
  ExtensionType,
  getAccountLen,
  getMintLen,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import {
  createInitializeInstruction,
  createUpdateAuthorityInstruction,
  pack,
} from "@solana/spl-token-metadata";
import { mintAccountFor, revokeMintInstructions, supplyInstructions } from "./mint-steps.ts";
import type { TokenFields, TokenSpec } from "./token-spec.ts";

/** A transfer fee as the mint's TransferFeeConfig holds it. */
export interface TransferFeeSpec {
  basisPoints: number;
  /** The most one transfer pays, in base units. */
  maximum: bigint;
  /** Who may change the fee and withdraw what it withheld; null makes the fee permanent. */
  authority: PublicKey | null;
}

export interface Token2022Metadata {
  mint: PublicKey;
  name: string;
  symbol: string;
  uri: string;
  /** null: nobody can ever change the metadata. */
  updateAuthority: PublicKey | null;
}

/**
 * The metadata a Token-2022 mint holds for a token: its name, symbol and uri, updatable by the
 * payer (or the address it is handed to) unless the metadata is immutable. The rent a build asks for and the instructions it
 * compiles both size the mint from this one value.
 */
export function token2022Metadata(
  mint: PublicKey,
  payer: PublicKey,
  t: Pick<
    TokenFields<unknown>,
    "name" | "symbol" | "uri" | "immutableMetadata" | "updateAuthority"
  >,
): Token2022Metadata {
  const holder = t.updateAuthority ? new PublicKey(t.updateAuthority) : payer;
  return {
    mint,
    name: t.name,
    symbol: t.symbol,
    uri: t.uri,
    updateAuthority: t.immutableMetadata ? null : holder,
  };
}

export interface Token2022Sizes {
  /** Bytes allocated by AllocateWithSeed: the mint with its fixed-size extensions. */
  allocated: number;
  /** Bytes after TokenMetadata's realloc: what the mint's lamports must cover. */
  final: number;
  /** Bytes of the recipient's associated token account. */
  tokenAccount: number;
}

const fixedMintExtensions = (transferFee: boolean): ExtensionType[] =>
  transferFee
    ? [ExtensionType.MetadataPointer, ExtensionType.TransferFeeConfig]
    : [ExtensionType.MetadataPointer];

/** The packed TokenMetadata (no additional fields), the length the program stores. */
export function packedMetadataLength(m: Token2022Metadata): number {
  return pack({
    mint: m.mint,
    name: m.name,
    symbol: m.symbol,
    uri: m.uri,
    updateAuthority: m.updateAuthority ?? undefined,
    additionalMetadata: [],
  }).length;
}

export function token2022Sizes(m: Token2022Metadata, transferFee: boolean): Token2022Sizes {
  const fixed = fixedMintExtensions(transferFee);
  return {
    allocated: getMintLen(fixed),
    final: getMintLen(fixed, { [ExtensionType.TokenMetadata]: packedMetadataLength(m) }),
    tokenAccount: getAccountLen(
      transferFee
        ? [ExtensionType.ImmutableOwner, ExtensionType.TransferFeeAmount]
        : [ExtensionType.ImmutableOwner],
    ),
  };
}

export interface Token2022Plan extends TokenSpec {
  mint: PublicKey;
  recipientTokenAccount: PublicKey;
  transferFee: TransferFeeSpec | null;
  /** The sizes the rent was computed for (worked out here when absent). */
  token2022Sizes?: Token2022Sizes;
}

/**
 * Everything between the compute-budget instructions and the fee transfer: create the mint,
 * initialize its extensions, then the mint itself, then its metadata (the TokenMetadata
 * instruction needs an initialized mint and the mint authority's signature; immutable metadata
 * then gives up its update authority), the recipient's account, the supply, and the optional
 * revoke last.
 */
export function token2022Instructions(p: Token2022Plan): TransactionInstruction[] {
  const program = TOKEN_2022_PROGRAM_ID;
  const metadata = token2022Metadata(p.mint, p.payer, p);
  const updateAuthority = metadata.updateAuthority;
  const sizes = p.token2022Sizes ?? token2022Sizes(metadata, p.transferFee !== null);
  const ixs: TransactionInstruction[] = [
    // Funded with the final size's rent, allocated at the fixed extensions' size (mint-account.ts:
    // lamports someone sends to the address first cannot make it fail).
    ...mintAccountFor(p, sizes.allocated, program),
    // Who may repoint the metadata: whoever may change it (nobody for immutable metadata).
    createInitializeMetadataPointerInstruction(p.mint, updateAuthority, p.mint, program),
  ];
  if (p.transferFee) {
    ixs.push(createInitializeTransferFeeConfigInstruction(
      p.mint,
      p.transferFee.authority,
      p.transferFee.authority,
      p.transferFee.basisPoints,
      p.transferFee.maximum,
      program,
    ));
  }
  ixs.push(
    createInitializeMint2Instruction(
      p.mint,
      p.decimals,
      p.payer,
      p.freezeAuthority ? new PublicKey(p.freezeAuthority) : p.revokeFreeze ? null : p.payer,
      program,
    ),
    // The update authority need not sign Initialize: one handed over is named here directly.
    createInitializeInstruction({
      programId: program,
      metadata: p.mint,
      updateAuthority: updateAuthority ?? p.payer,
      mint: p.mint,
      mintAuthority: p.payer,
      name: p.name,
      symbol: p.symbol,
      uri: p.uri,
    }),
  );
  // Initialize refuses an empty update authority, so immutability is a second step: hand the
  // authority to nobody (same size: the field is 32 bytes either way).
  if (p.immutableMetadata) {
    ixs.push(createUpdateAuthorityInstruction({
      programId: program,
      metadata: p.mint,
      oldAuthority: p.payer,
      newAuthority: null,
    }));
  }
  ixs.push(...supplyInstructions(p, program), ...revokeMintInstructions(p, program));
  return ixs;
}

/**
 * The rent a Token-2022 build pays, in the shape of the classic table: the mint at its final
 * size (the metadata lives in it, so no metadata account and no Metaplex protocol fee) and the
 * recipient's account with the extensions the mint gives it.
 */
export function token2022Rent<T extends { mint: bigint; tokenAccount: bigint }>(
  rent: T & { metadata: bigint; metadataProtocolFee: bigint },
  sizes: Token2022Sizes,
  minimumFor: (dataLength: number) => bigint,
): T {
  return {
    ...rent,
    mint: minimumFor(sizes.final),
    tokenAccount: minimumFor(sizes.tokenAccount),
    metadata: 0n,
    metadataProtocolFee: 0n,
  };
}
