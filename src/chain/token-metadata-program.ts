/**
 * Stand-in for the Metaplex Token Metadata program when its binary is not available: executes
 * CreateMetadataAccountV3 with the real program's checks, in the real program's order, and
 * produces the same account bytes, system-program CPIs, logs and error codes. Every other
 * instruction of the program is refused.
 *
 * The function is pure with respect to chain state: it reads accounts through `env` and only
 * reports the writes to apply, so a failure needs no cleanup.
 */
import { PublicKey } from "@solana/web3.js";
import { type CollectionDetails, UseMethod } from "@metaplex-foundation/mpl-token-metadata";
import type { Creator } from "@metaplex-foundation/mpl-token-metadata";
import {
  CREATE_METADATA_ACCOUNT_V3_DISCRIMINATOR,
  decodeCreateMetadataAccountV3Data,
  editionPda,
  encodeMetadataAccount,
  MAX_CREATOR_LIMIT,
  MAX_METADATA_LEN,
  MAX_NAME_LENGTH,
  MAX_SYMBOL_LENGTH,
  MAX_URI_LENGTH,
  metadataCreateLamports,
  metadataPda,
  TOKEN_METADATA_PROGRAM_ID,
  TokenStandard,
} from "../solana/token-metadata.ts";
import { AccountSnap, RENT_EXEMPT_EPOCH, SYSTEM_PROGRAM } from "./accounts.ts";
import { concatBytes, readU32, u32le, u64le } from "./codec.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "./spl-token.ts";
import type { IxErrorJson } from "./tx-error.ts";

export const TOKEN_METADATA_PROGRAM = TOKEN_METADATA_PROGRAM_ID.toBase58();

/** Approximate compute cost of the real program (mainnet logs show 35k-41k for a create). */
const CU_CREATE = 38_000;
const CU_EARLY_FAILURE = 8_600;
const CU_LATE_FAILURE = 30_000;

/** MetadataError codes of the real program. */
const E = {
  InvalidMetadataKey: [
    5,
    "Metadata's key must match seed of ['metadata', program id, mint] provided",
  ],
  NotMintAuthority: [9, "You must be the mint authority and signer on this transaction"],
  InvalidMintAuthority: [10, "Mint authority provided does not match the authority on the mint"],
  NameTooLong: [11, "Name too long"],
  SymbolTooLong: [12, "Symbol too long"],
  UriTooLong: [13, "URI too long"],
  CreatorsTooLong: [36, "Creators list too long"],
  CreatorsMustBeAtleastOne: [37, "Creators must be at least one if set"],
  InvalidBasisPoints: [41, "Basis points cannot be more than 10000"],
  ShareTotalMustBe100: [45, "Share total must equal 100 for creator array"],
  NumericalOverflowError: [51, "NumericalOverflowError"],
  CannotVerifyAnotherCreator: [
    54,
    "You cannot unilaterally verify another creator, they must sign",
  ],
  IncorrectOwner: [57, "Incorrect account owner"],
  DuplicateCreatorAddress: [60, "No duplicate creator addresses"],
  CollectionCannotBeVerifiedInThisInstruction: [
    74,
    "Collection cannot be verified in this instruction",
  ],
  InvalidUseMethod: [77, "This use method is invalid"],
} as const satisfies Record<string, readonly [number, string]>;

export interface IxAccount {
  /** Index in the transaction's account keys. */
  index: number;
  key: Uint8Array;
  keyStr: string;
  isSigner: boolean;
  isWritable: boolean;
}

export interface ProgramEnv {
  get(index: number): AccountSnap | null;
  rentExemptMinimum(len: number): bigint;
  /** Compute units left for this instruction. */
  cuRemaining: number;
}

export interface EmulatedInnerIx {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number;
}

export interface ProgramResult {
  err: IxErrorJson | null;
  logs: string[];
  unitsConsumed: number;
  innerInstructions: EmulatedInnerIx[];
  writes: { index: number; account: AccountSnap }[];
}

const SYS = SYSTEM_PROGRAM;
const META = TOKEN_METADATA_PROGRAM;
const OWNER_BYTES = TOKEN_METADATA_PROGRAM_ID.toBytes();

class Failure {
  constructor(readonly err: IxErrorJson, readonly logs: string[], readonly cu: number) {}
}

function metadataError(e: readonly [number, string], cu: number): Failure {
  return new Failure({ Custom: e[0] }, [`Program log: ${e[1]}`], cu);
}

/** Runs one top-level instruction of the Token Metadata program. */
export function runTokenMetadataInstruction(
  accounts: IxAccount[],
  data: Uint8Array,
  env: ProgramEnv,
): ProgramResult {
  const logs = [`Program ${META} invoke [1]`];
  const inner: EmulatedInnerIx[] = [];
  const finish = (err: IxErrorJson | null, extra: string[], cu: number): ProgramResult => {
    const used = Math.min(cu, env.cuRemaining);
    const exceeded = cu > env.cuRemaining;
    logs.push(...(exceeded ? [] : extra));
    logs.push(`Program ${META} consumed ${used} of ${env.cuRemaining} compute units`);
    const finalErr: IxErrorJson | null = exceeded ? "ComputationalBudgetExceeded" : err;
    if (finalErr === null) logs.push(`Program ${META} success`);
    else logs.push(`Program ${META} failed: ${failText(finalErr)}`);
    return {
      err: finalErr,
      logs,
      unitsConsumed: used,
      innerInstructions: finalErr === null ? inner : [],
      writes: [],
    };
  };

  if (data[0] !== CREATE_METADATA_ACCOUNT_V3_DISCRIMINATOR) {
    return finish("UnsupportedProgramId", [
      `Program log: embedded chain: Token Metadata instruction ${
        data[0] ?? "(empty)"
      } is not supported; only CreateMetadataAccountV3 (33) is emulated. Set TOKEN_METADATA_PROGRAM_SO to run the real program.`,
    ], 1_000);
  }
  logs.push("Program log: IX: Create Metadata Accounts v3");
  try {
    const writes = createMetadataAccountV3(accounts, data, env, logs, inner);
    const result = finish(null, [], CU_CREATE);
    if (result.err === null) result.writes = writes;
    return result;
  } catch (e) {
    if (e instanceof Failure) return finish(e.err, e.logs, e.cu);
    throw e;
  }
}

function failText(err: IxErrorJson): string {
  if (typeof err === "object" && "Custom" in err) {
    return `custom program error: 0x${err.Custom.toString(16)}`;
  }
  const texts: Record<string, string> = {
    NotEnoughAccountKeys: "insufficient account keys for instruction",
    InvalidInstructionData: "invalid instruction data",
    InvalidAccountData: "invalid account data for instruction",
    PrivilegeEscalation: "Cross-program invocation with unauthorized signer or writable account",
    MissingAccount: "An account required by the instruction is missing",
    ComputationalBudgetExceeded: "Computational budget exceeded",
    UnsupportedProgramId: "Unsupported program id",
    ProgramFailedToComplete: "Program failed to complete",
  };
  return typeof err === "string" ? texts[err] ?? err : JSON.stringify(err);
}

function createMetadataAccountV3(
  accounts: IxAccount[],
  data: Uint8Array,
  env: ProgramEnv,
  logs: string[],
  inner: EmulatedInnerIx[],
): { index: number; account: AccountSnap }[] {
  if (accounts.length < 6) throw new Failure("NotEnoughAccountKeys", [], 600);
  const [metadata, mint, mintAuthority, payer, updateAuthority, system] = accounts;
  let args;
  try {
    args = decodeCreateMetadataAccountV3Data(data);
  } catch {
    throw new Failure("InvalidInstructionData", [], 900);
  }
  if (system.keyStr !== SYS) {
    throw new Failure("MissingAccount", [
      `Program log: system program account ${system.keyStr} is not the System Program`,
    ], 2_000);
  }

  // levy(): fund the metadata account with rent + the protocol fee before anything else.
  const { rent, protocolFee } = metadataCreateLamports((n) => env.rentExemptMinimum(n));
  const levy = rent + protocolFee;
  cpiPrivileges(payer, true, true);
  cpiPrivileges(metadata, false, true);
  const payerAcc = env.get(payer.index);
  const payerLamports = payerAcc?.lamports ?? 0n;
  logs.push(`Program ${SYS} invoke [2]`);
  if (payerAcc && payerAcc.data.length > 0) {
    throw new Failure({ Custom: 0 }, [
      "Transfer: `from` must not carry data",
      `Program ${SYS} failed: invalid program argument`,
    ], CU_EARLY_FAILURE);
  }
  if (payerLamports < levy) {
    throw new Failure({ Custom: 1 }, [
      `Transfer: insufficient lamports ${payerLamports}, need ${levy}`,
      `Program ${SYS} failed: custom program error: 0x1`,
    ], CU_EARLY_FAILURE);
  }
  logs.push(`Program ${SYS} success`);
  inner.push(systemIx(system.index, [payer.index, metadata.index], 2, u64le(levy)));

  // process_create_metadata_accounts_logic
  const mintAcc = env.get(mint.index);
  const mintData = mintAcc?.data ?? new Uint8Array(0);
  if (mintData.length < 36) {
    throw new Failure("ProgramFailedToComplete", [
      `Program log: mint ${mint.keyStr} has ${mintData.length} bytes of data; it is not an SPL Token mint`,
    ], CU_EARLY_FAILURE);
  }
  const tag = readU32(mintData, 0);
  if (tag > 1) throw new Failure("InvalidAccountData", [], CU_EARLY_FAILURE);
  if (tag === 0) throw metadataError(E.InvalidMintAuthority, CU_EARLY_FAILURE);
  if (new PublicKey(mintData.subarray(4, 36)).toBase58() !== mintAuthority.keyStr) {
    throw metadataError(E.InvalidMintAuthority, CU_EARLY_FAILURE);
  }
  if (!mintAuthority.isSigner) throw metadataError(E.NotMintAuthority, CU_EARLY_FAILURE);
  const mintOwner = mintAcc!.ownerStr;
  if (mintOwner !== TOKEN_PROGRAM && mintOwner !== TOKEN_2022_PROGRAM) {
    throw metadataError(E.IncorrectOwner, CU_EARLY_FAILURE);
  }
  const mintKey = new PublicKey(mint.key);
  if (metadataPda(mintKey).toBase58() !== metadata.keyStr) {
    throw metadataError(E.InvalidMetadataKey, CU_LATE_FAILURE);
  }

  // create_or_allocate_account_raw: already funded by the levy, so allocate + assign only.
  const metaAcc = env.get(metadata.index);
  logs.push("Program log: Allocate space for the account");
  logs.push(`Program ${SYS} invoke [2]`);
  if (metaAcc && (metaAcc.data.length > 0 || metaAcc.ownerStr !== SYS)) {
    throw new Failure({ Custom: 0 }, [
      `Allocate: account Address { address: ${metadata.keyStr}, base: None } already in use`,
      `Program ${SYS} failed: custom program error: 0x0`,
    ], CU_LATE_FAILURE);
  }
  logs.push(`Program ${SYS} success`);
  inner.push(systemIx(system.index, [metadata.index], 8, u64le(BigInt(MAX_METADATA_LEN))));
  logs.push("Program log: Assign the account to the owning program");
  logs.push(`Program ${SYS} invoke [2]`, `Program ${SYS} success`);
  inner.push(systemIx(system.index, [metadata.index], 1, OWNER_BYTES));

  // assert_data_valid and friends
  const d = args.data;
  const enc = new TextEncoder();
  if (enc.encode(d.name).length > MAX_NAME_LENGTH) {
    throw metadataError(E.NameTooLong, CU_LATE_FAILURE);
  }
  if (enc.encode(d.symbol).length > MAX_SYMBOL_LENGTH) {
    throw metadataError(E.SymbolTooLong, CU_LATE_FAILURE);
  }
  if (enc.encode(d.uri).length > MAX_URI_LENGTH) throw metadataError(E.UriTooLong, CU_LATE_FAILURE);
  if (d.sellerFeeBasisPoints > 10_000) throw metadataError(E.InvalidBasisPoints, CU_LATE_FAILURE);
  const creators = d.creators.__option === "Some" ? d.creators.value : null;
  if (creators) validateCreators(creators, updateAuthority);
  if (d.uses.__option === "Some") {
    const u = d.uses.value;
    const single = u.useMethod === UseMethod.Single && (u.total !== 1n || u.remaining !== 1n);
    const multiple = u.useMethod === UseMethod.Multiple &&
      (u.total < 2n || u.total < u.remaining);
    if (single || multiple) throw metadataError(E.InvalidUseMethod, CU_LATE_FAILURE);
  }
  if (d.collection.__option === "Some" && d.collection.value.verified) {
    throw metadataError(E.CollectionCannotBeVerifiedInThisInstruction, CU_LATE_FAILURE);
  }
  let collectionDetails: CollectionDetails | null = null;
  if (args.collectionDetails.__option === "Some") {
    const cd = args.collectionDetails.value;
    // New collections always start at size 0, whatever the caller sent.
    collectionDetails = cd.__kind === "V1" ? { __kind: "V1", size: 0n } : cd;
  }

  const decimals = mintData.length > 44 ? mintData[44] : 0;
  const accountData = encodeMetadataAccount({
    updateAuthority: new PublicKey(updateAuthority.key),
    mint: mintKey,
    name: d.name,
    symbol: d.symbol,
    uri: d.uri,
    sellerFeeBasisPoints: d.sellerFeeBasisPoints,
    creators,
    isMutable: args.isMutable,
    editionNonce: editionPda(mintKey)[1],
    tokenStandard: decimals === 0 ? TokenStandard.FungibleAsset : TokenStandard.Fungible,
    collection: d.collection,
    uses: d.uses,
    collectionDetails,
    feePaid: true,
  });
  const prevMetaLamports = metaAcc?.lamports ?? 0n;
  return [
    { index: payer.index, account: payerAcc!.with({ lamports: payerLamports - levy }) },
    {
      index: metadata.index,
      account: newAccount(prevMetaLamports + levy, accountData, OWNER_BYTES, metaAcc),
    },
  ];
}

function newAccount(
  lamports: bigint,
  data: Uint8Array,
  owner: Uint8Array,
  prev: AccountSnap | null,
): AccountSnap {
  if (prev) return prev.with({ lamports, data, owner });
  return new AccountSnap(lamports, data, owner, false, RENT_EXEMPT_EPOCH);
}

/** A CPI fails when it asks for more privilege than the caller's own account meta carries. */
function cpiPrivileges(a: IxAccount, signer: boolean, writable: boolean): void {
  if (signer && !a.isSigner) {
    throw new Failure("PrivilegeEscalation", [`${a.keyStr}'s signer privilege escalated`], 4_000);
  }
  if (writable && !a.isWritable) {
    throw new Failure("PrivilegeEscalation", [`${a.keyStr}'s writable privilege escalated`], 4_000);
  }
}

function validateCreators(creators: Creator[], updateAuthority: IxAccount): void {
  if (creators.length > MAX_CREATOR_LIMIT) throw metadataError(E.CreatorsTooLong, CU_LATE_FAILURE);
  if (creators.length === 0) throw metadataError(E.CreatorsMustBeAtleastOne, CU_LATE_FAILURE);
  const seen = new Set<string>();
  let total = 0;
  for (const c of creators) {
    const addr = c.address.toString();
    if (seen.has(addr)) throw metadataError(E.DuplicateCreatorAddress, CU_LATE_FAILURE);
    seen.add(addr);
    total += c.share;
    if (total > 255) throw metadataError(E.NumericalOverflowError, CU_LATE_FAILURE);
    // Only the update authority can verify itself, and only by signing.
    if (c.verified && !(addr === updateAuthority.keyStr && updateAuthority.isSigner)) {
      throw metadataError(E.CannotVerifyAnotherCreator, CU_LATE_FAILURE);
    }
  }
  if (total !== 100) throw metadataError(E.ShareTotalMustBe100, CU_LATE_FAILURE);
}

function systemIx(
  programIdIndex: number,
  accounts: number[],
  discriminator: number,
  payload: Uint8Array,
): EmulatedInnerIx {
  return {
    programIdIndex,
    accounts,
    data: concatBytes([u32le(discriminator), payload]),
    stackHeight: 2,
  };
}
