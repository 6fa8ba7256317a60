/**
 * UpdateMetadataAccountV2 of the Metaplex Token Metadata program, encoded and decoded through
 * mpl-token-metadata's own serializer (as token-metadata.ts does for CreateMetadataAccountV3), so
 * the bytes are those the Metaplex SDKs write. Shared by the update builder (src/tokens/) and the
 * embedded chain's emulation of the program.
 */
import { PublicKey, TransactionInstruction } from "@solana/web3.js";
import { getUpdateMetadataAccountV2InstructionDataSerializer } from "@metaplex-foundation/mpl-token-metadata";
import { none, type PublicKey as UmiPublicKey, some } from "@metaplex-foundation/umi";
import { metadataPda, TOKEN_METADATA_PROGRAM_ID } from "./token-metadata.ts";

/** The program's instruction discriminator (first data byte). */
export const UPDATE_METADATA_ACCOUNT_V2_DISCRIMINATOR = 15;

const updateV2Serializer = getUpdateMetadataAccountV2InstructionDataSerializer();

export function decodeUpdateMetadataAccountV2Data(
  data: Uint8Array,
): ReturnType<typeof updateV2Serializer.deserialize>[0] {
  return updateV2Serializer.deserialize(data)[0];
}

export interface UpdateMetadataAccountV2Params {
  mint: PublicKey;
  /** The current update authority: the one signer the program asks for. */
  updateAuthority: PublicKey;
  /** New name, symbol and uri (the rest as a fungible token of this service has it), or none. */
  data: { name: string; symbol: string; uri: string } | null;
  newUpdateAuthority: PublicKey | null;
  /** false makes the metadata immutable; null leaves it. */
  isMutable: false | null;
}

export function updateMetadataAccountV2Instruction(
  p: UpdateMetadataAccountV2Params,
): TransactionInstruction {
  const data = updateV2Serializer.serialize({
    data: p.data
      ? some({
        name: p.data.name,
        symbol: p.data.symbol,
        uri: p.data.uri,
        // What every build of this service creates: no royalties, creators, collection or uses.
        sellerFeeBasisPoints: 0,
        creators: none(),
        collection: none(),
        uses: none(),
      })
      : none(),
    newUpdateAuthority: p.newUpdateAuthority
      ? some(p.newUpdateAuthority.toBase58() as UmiPublicKey)
      : none(),
    primarySaleHappened: none(),
    isMutable: p.isMutable === false ? some(false) : none(),
  });
  return new TransactionInstruction({
    programId: TOKEN_METADATA_PROGRAM_ID,
    keys: [
      { pubkey: metadataPda(p.mint), isSigner: false, isWritable: true },
      { pubkey: p.updateAuthority, isSigner: true, isWritable: false },
    ],
    data: Buffer.from(data),
  });
}
