/**
 * Metaplex Token Metadata helpers shared by the token builder, the verifier and the embedded
 * chain. Encoding and decoding go through mpl-token-metadata's own serializers so that what we
 * write is byte-for-byte what the Metaplex SDKs read.
 */
import { PublicKey, SystemProgram, TransactionInstruction } from "@solana/web3.js";
import {
  type CollectionDetails,
  type Creator,
  getCreateMetadataAccountV3InstructionDataSerializer,
  getMetadataAccountDataSerializer,
  type MetadataAccountDataArgs,
  TokenStandard,
} from "@metaplex-foundation/mpl-token-metadata";
import { none, type Option, type PublicKey as UmiPublicKey, some } from "@metaplex-foundation/umi";

export const TOKEN_METADATA_PROGRAM_ID = new PublicKey(
  "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s",
);

/** Limits and sizes of the on-chain program (mpl-token-metadata `state/metadata.rs`). */
export const MAX_NAME_LENGTH = 32;
export const MAX_SYMBOL_LENGTH = 10;
export const MAX_URI_LENGTH = 200;
export const MAX_CREATOR_LIMIT = 5;
/**
 * Bytes of the metadata account CreateMetadataAccountV3 allocates: the program's
 * `MAX_METADATA_LEN` since its August 2024 release (the older layout was 679 bytes). Checked
 * against the program as deployed by tests/chain/token-metadata-differential.test.ts.
 */
export const MAX_METADATA_LEN = 607;
/** The program marks a paid fee in the last byte of the account. */
export const METADATA_FEE_FLAG_OFFSET = MAX_METADATA_LEN - 1;

/**
 * The protocol fee is not a fixed lamport count: the program computes it from the cluster's rent
 * as `rent.minimum_balance(1308) + 5440` (`state/fee.rs`, 10,000,000 lamports at mainnet's rent)
 * and keeps it in the metadata account on top of the account's own rent.
 */
export const CREATE_FEE_RENT_BYTES = 1308;
export const CREATE_FEE_OFFSET_LAMPORTS = 5440n;

/**
 * What CreateMetadataAccountV3 moves from the payer into the metadata account, given the
 * cluster's rent-exempt minimum by data length: the account's rent and the protocol fee. The one
 * source of truth for the chain's emulation and for the costs a build quotes.
 */
export function metadataCreateLamports(
  rentExemptMinimum: (dataLength: number) => bigint,
): { rent: bigint; protocolFee: bigint } {
  return {
    rent: rentExemptMinimum(MAX_METADATA_LEN),
    protocolFee: rentExemptMinimum(CREATE_FEE_RENT_BYTES) + CREATE_FEE_OFFSET_LAMPORTS,
  };
}

/** Instruction discriminators (first data byte) of the program. */
export const CREATE_METADATA_ACCOUNT_V3_DISCRIMINATOR = 33;

const METADATA_SEED = new TextEncoder().encode("metadata");
const EDITION_SEED = new TextEncoder().encode("edition");

/**
 * PDA derivation costs a few curve checks in JS and the same mint is usually
 * derived several times in a row (build, simulate, send, verify), so results are memoized.
 */
const pdaCache = new Map<string, [PublicKey, number]>();
const PDA_CACHE_MAX = 20_000;

function cachedPda(id: string, seeds: Uint8Array[]): [PublicKey, number] {
  let hit = pdaCache.get(id);
  if (!hit) {
    hit = PublicKey.findProgramAddressSync(seeds, TOKEN_METADATA_PROGRAM_ID);
    if (pdaCache.size >= PDA_CACHE_MAX) pdaCache.clear();
    pdaCache.set(id, hit);
  }
  return hit;
}

export function metadataPda(mint: PublicKey): PublicKey {
  return metadataPdaWithBump(mint)[0];
}

/** The metadata PDA and its bump (how many tries the program's own derivation takes). */
export function metadataPdaWithBump(mint: PublicKey): [PublicKey, number] {
  return cachedPda(`m:${mint.toBase58()}`, [
    METADATA_SEED,
    TOKEN_METADATA_PROGRAM_ID.toBytes(),
    mint.toBytes(),
  ]);
}

export function editionPda(mint: PublicKey): [PublicKey, number] {
  return cachedPda(`e:${mint.toBase58()}`, [
    METADATA_SEED,
    TOKEN_METADATA_PROGRAM_ID.toBytes(),
    mint.toBytes(),
    EDITION_SEED,
  ]);
}

// Building a umi serializer is far more expensive than using one; build each once.
const createV3Serializer = getCreateMetadataAccountV3InstructionDataSerializer();
const metadataSerializer = getMetadataAccountDataSerializer();

/** Decodes CreateMetadataAccountV3 instruction data (discriminator 33 included). */
export function decodeCreateMetadataAccountV3Data(
  data: Uint8Array,
): ReturnType<typeof createV3Serializer.deserialize>[0] {
  return createV3Serializer.deserialize(data)[0];
}

export interface CreateMetadataAccountV3Params {
  /** Defaults to metadataPda(mint). */
  metadata?: PublicKey;
  mint: PublicKey;
  mintAuthority: PublicKey;
  payer: PublicKey;
  updateAuthority: PublicKey;
  name: string;
  symbol: string;
  uri: string;
  isMutable: boolean;
}

export function createMetadataAccountV3Instruction(
  p: CreateMetadataAccountV3Params,
): TransactionInstruction {
  const data = createV3Serializer.serialize({
    data: {
      name: p.name,
      symbol: p.symbol,
      uri: p.uri,
      sellerFeeBasisPoints: 0,
      creators: none(),
      collection: none(),
      uses: none(),
    },
    isMutable: p.isMutable,
    collectionDetails: none(),
  });
  // The program only needs the update authority to sign when it verifies a creator; we list
  // none, so it signs only when it is already one of the signing accounts anyway.
  const updateAuthorityIsSigner = p.updateAuthority.equals(p.payer) ||
    p.updateAuthority.equals(p.mintAuthority);
  return new TransactionInstruction({
    programId: TOKEN_METADATA_PROGRAM_ID,
    keys: [
      { pubkey: p.metadata ?? metadataPda(p.mint), isSigner: false, isWritable: true },
      { pubkey: p.mint, isSigner: false, isWritable: false },
      { pubkey: p.mintAuthority, isSigner: true, isWritable: false },
      { pubkey: p.payer, isSigner: true, isWritable: true },
      { pubkey: p.updateAuthority, isSigner: updateAuthorityIsSigner, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
    ],
    data: Buffer.from(data),
  });
}

export interface DecodedMetadata {
  key: number;
  updateAuthority: string;
  mint: string;
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: { address: string; verified: boolean; share: number }[] | null;
  primarySaleHappened: boolean;
  isMutable: boolean;
  editionNonce: number | null;
  tokenStandard: TokenStandard | null;
}

/** The program pads strings with NULs to their maximum length; readers want them trimmed. */
export function stripNuls(s: string): string {
  return s.replace(/\0+$/, "");
}

function optionValue<T>(o: Option<T>): T | null {
  return o.__option === "Some" ? o.value : null;
}

export function decodeMetadataAccount(data: Uint8Array): DecodedMetadata {
  const [m] = metadataSerializer.deserialize(data);
  const creators = optionValue(m.creators);
  return {
    key: m.key,
    updateAuthority: m.updateAuthority.toString(),
    mint: m.mint.toString(),
    name: stripNuls(m.name),
    symbol: stripNuls(m.symbol),
    uri: stripNuls(m.uri),
    sellerFeeBasisPoints: m.sellerFeeBasisPoints,
    creators: creators
      ? creators.map((c) => ({
        address: c.address.toString(),
        verified: c.verified,
        share: c.share,
      }))
      : null,
    primarySaleHappened: m.primarySaleHappened,
    isMutable: m.isMutable,
    editionNonce: optionValue(m.editionNonce),
    tokenStandard: optionValue(m.tokenStandard),
  };
}

export interface MetadataAccountInput {
  updateAuthority: PublicKey;
  mint: PublicKey;
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: Creator[] | null;
  isMutable: boolean;
  editionNonce: number | null;
  tokenStandard: TokenStandard | null;
  collection: MetadataAccountDataArgs["collection"];
  uses: MetadataAccountDataArgs["uses"];
  collectionDetails: CollectionDetails | null;
  feePaid: boolean;
}

function puff(s: string, len: number): string {
  const bytes = new TextEncoder().encode(s).length;
  return bytes >= len ? s : s + "\0".repeat(len - bytes);
}

/**
 * Account data exactly as the program saves it: strings puffed out with NULs to their maximum
 * length, the struct zero-padded to MAX_METADATA_LEN and the fee flag in the last byte.
 */
export function encodeMetadataAccount(m: MetadataAccountInput): Uint8Array {
  const body = metadataSerializer.serialize({
    // umi keys are base58 strings; web3.js already validated these, and umi's own
    // validation costs more than the whole serialization.
    updateAuthority: m.updateAuthority.toBase58() as UmiPublicKey,
    mint: m.mint.toBase58() as UmiPublicKey,
    name: puff(m.name, MAX_NAME_LENGTH),
    symbol: puff(m.symbol, MAX_SYMBOL_LENGTH),
    uri: puff(m.uri, MAX_URI_LENGTH),
    sellerFeeBasisPoints: m.sellerFeeBasisPoints,
    creators: m.creators ? some(m.creators) : none(),
    primarySaleHappened: false,
    isMutable: m.isMutable,
    editionNonce: m.editionNonce === null ? none() : some(m.editionNonce),
    tokenStandard: m.tokenStandard === null ? none() : some(m.tokenStandard),
    collection: m.collection,
    uses: m.uses,
    collectionDetails: m.collectionDetails ? some(m.collectionDetails) : none(),
    programmableConfig: none(),
  });
  const out = new Uint8Array(Math.max(MAX_METADATA_LEN, body.length));
  out.set(body);
  if (m.feePaid) out[METADATA_FEE_FLAG_OFFSET] = 1;
  return out;
}
