/**
 * A token's current state as the chain holds it, decoded from the accounts an update reads in its
 * one round trip: the mint (its mint and freeze authorities; on Token-2022 also its metadata and
 * metadata pointer, which live in it) and, for the classic program, the Metaplex metadata
 * account. Pure: account infos in, state out; the decoders are the libraries' own.
 */
import type { AccountInfo, PublicKey } from "@solana/web3.js";
import {
  ExtensionType,
  getExtensionData,
  getMetadataPointerState,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackMint,
} from "@solana/spl-token";
import { unpack } from "@solana/spl-token-metadata";
import { decodeMetadataAccount, TOKEN_METADATA_PROGRAM_ID } from "../solana/token-metadata.ts";
import type { TokenProgramName } from "./transaction.ts";

export interface TokenMetadataState {
  name: string;
  symbol: string;
  uri: string;
  /** null: nobody can change the metadata (Token-2022's immutable form). */
  updateAuthority: string | null;
  isMutable: boolean;
}

export interface TokenState {
  tokenProgram: TokenProgramName;
  /** null: revoked. */
  mintAuthority: string | null;
  freezeAuthority: string | null;
  metadata: TokenMetadataState | null;
  /** Token-2022: who may repoint the metadata (null: nobody, or no pointer). */
  metadataPointerAuthority: string | null;
  /** The mint account's lamports and data length (Token-2022's rent top-up follows them). */
  mintLamports: bigint;
  mintDataLength: number;
}

/** The state, or a reason the accounts are not this build's token (null mint: nothing there). */
export function decodeTokenState(
  mint: PublicKey,
  tokenProgram: TokenProgramName,
  mintInfo: AccountInfo<Uint8Array> | null,
  metaplexInfo: AccountInfo<Uint8Array> | null,
): TokenState | string {
  if (!mintInfo) return "no mint account at this address on chain (has the creation landed?)";
  const programId = tokenProgram === "token-2022" ? TOKEN_2022_PROGRAM_ID : TOKEN_PROGRAM_ID;
  if (!mintInfo.owner.equals(programId)) {
    return "the account at this address is not the token's mint";
  }
  const m = unpackMint(mint, { ...mintInfo, data: Buffer.from(mintInfo.data) }, programId);
  const base = {
    tokenProgram,
    mintAuthority: m.mintAuthority?.toBase58() ?? null,
    freezeAuthority: m.freezeAuthority?.toBase58() ?? null,
    mintLamports: BigInt(mintInfo.lamports),
    mintDataLength: mintInfo.data.length,
  };
  if (tokenProgram === "token-2022") {
    const ext = getExtensionData(ExtensionType.TokenMetadata, m.tlvData);
    const md = ext ? unpack(ext) : null;
    // Token-2022 metadata is immutable once its update authority is gone.
    const authority = md?.updateAuthority?.toBase58() ?? null;
    return {
      ...base,
      metadata: md &&
        metadataOf({ ...md, updateAuthority: authority, isMutable: authority !== null }),
      metadataPointerAuthority: getMetadataPointerState(m)?.authority?.toBase58() ?? null,
    };
  }
  const md = metaplexInfo && metaplexInfo.owner.equals(TOKEN_METADATA_PROGRAM_ID)
    ? decodeMetadataAccount(metaplexInfo.data)
    : null;
  return { ...base, metadata: md && metadataOf(md), metadataPointerAuthority: null };
}

/** The fields an update reads of either program's metadata. */
function metadataOf(
  md: {
    name: string;
    symbol: string;
    uri: string;
    updateAuthority: string | null;
    isMutable: boolean;
  },
): NonNullable<TokenState["metadata"]> {
  const { name, symbol, uri, updateAuthority, isMutable } = md;
  return { name, symbol, uri, updateAuthority, isMutable };
}
