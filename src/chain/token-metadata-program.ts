/**
 * Stand-in for the Metaplex Token Metadata program when its binary is not available: executes
 * CreateMetadataAccountV3 with the real program's checks, in the real program's order, and
 * produces the same account bytes, system-program CPIs, logs and error codes;
 * UpdateMetadataAccountV2 likewise (token-metadata-update.ts). Every other instruction of the
 * program is refused.
 *
 * The function is pure with respect to chain state: it reads accounts through `env` and only
 * reports the writes to apply, so a failure needs no cleanup.
 */
import { PublicKey } from "@solana/web3.js";
import {
  type CollectionDetails,
  TokenStandard,
  UseMethod,
} from "@metaplex-foundation/mpl-token-metadata";
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
  metadataPdaWithBump,
  TOKEN_METADATA_PROGRAM_ID,
} from "../solana/token-metadata.ts";
import { AccountSnap, RENT_EXEMPT_EPOCH, SYSTEM_PROGRAM } from "./accounts.ts";
import { concatBytes, readU32, u32le, u64le } from "./codec.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "./spl-token.ts";
import type { IxErrorJson } from "../solana/tx-error.ts";
import { UPDATE_METADATA_ACCOUNT_V2_DISCRIMINATOR } from "../solana/token-metadata-update.ts";
import { runUpdateMetadataAccountV2 } from "./token-metadata-update.ts";

export const TOKEN_METADATA_PROGRAM = TOKEN_METADATA_PROGRAM_ID.toBase58();

/**
 * Compute use of a successful create, derived from the program as deployed (a fit over 260
 * random mints, names, symbols and URIs run on the real binary; docs/chain.md):
 * - every bump `find_program_address` tries costs 1,500 CU (the syscall's price), and the program
 *   searches two PDAs, the metadata account's and the edition's (for the edition nonce), so a
 *   mint whose bumps are 255 and 255 is cheapest and each lower bump adds 1,500;
 * - every byte of name, symbol and URI saves about 25 CU (fewer NULs to puff the strings out to
 *   their maximum length);
 * - the rest is a base, taken at the top of what was measured: the emulation reports at least what
 *   the real program uses for the same mint and at most CU_EMULATION_BAND more, so a limit sized
 *   from an emulated simulation also holds on mainnet.
 */
const CU_CREATE_BASE = 36_800;
const CU_PER_BUMP_TRIED = 1_500;
const CU_PER_STRING_BYTE = 25;
/** How far above the real program's use the emulated figure may be (never below it). */
export const CU_EMULATION_BAND = 2_500;
/**
 * Compute used when each step of a create happens, measured on the real program: the smallest
 * budget under which each log line and CPI still happens (bisected), and what it reports when
 * each check fails. For a mint whose metadata bump is 255; every lower bump adds
 * CU_PER_BUMP_TRIED from the metadata-key check on.
 */
const CU_AT = {
  instructionLog: 5_487,
  /** Over an existing metadata account: the real program's first check. */
  alreadyInitialized: 10_802,
  levy: 8_445,
  mintChecks: 10_579,
  metadataKeyCheck: 12_143,
  allocate: 13_909,
  assign: 19_031,
  dataChecks: 23_461,
};

/** The emulated compute use of a successful create (see above). */
export function createUnits(
  mint: PublicKey,
  metadataBump: number,
  strings: { name: string; symbol: string; uri: string },
): number {
  const bumps = (255 - metadataBump) + (255 - editionPda(mint)[1]);
  const enc = new TextEncoder();
  const bytes = enc.encode(strings.name).length + enc.encode(strings.symbol).length +
    enc.encode(strings.uri).length;
  return CU_CREATE_BASE + CU_PER_BUMP_TRIED * bumps - CU_PER_STRING_BYTE * bytes;
}

/** MetadataError codes of the real program. */
const E = {
  InvalidMetadataKey: [
    5,
    // The program's message starts with a space.
    " Metadata's key must match seed of ['metadata', program id, mint] provided",
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
  ExpectedUninitializedAccount: [199, "Expected account to be uninitialized"],
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

/**
 * What the instruction has done so far, each step stamped with the compute units used when it
 * happened, so running out of compute can stop it where the real program would stop: the log
 * lines and system-program CPIs before that point stay, the rest never happens.
 */
class Trace {
  at = 0;
  readonly logs: { line: string; at: number }[] = [];
  readonly inner: { ix: EmulatedInnerIx; at: number }[] = [];
  log(...lines: string[]): void {
    for (const line of lines) this.logs.push({ line, at: this.at });
  }
  cpi(ix: EmulatedInnerIx): void {
    this.inner.push({ ix, at: this.at });
  }
}

/** Runs one top-level instruction of the Token Metadata program. */
export function runTokenMetadataInstruction(
  accounts: IxAccount[],
  data: Uint8Array,
  env: ProgramEnv,
): ProgramResult {
  const t = new Trace();
  const finish = (err: IxErrorJson | null, extra: string[], cu: number): ProgramResult => {
    const budget = env.cuRemaining;
    const exceeded = cu > budget;
    const used = exceeded ? budget : cu;
    const upTo = <T extends { at: number }>(list: T[]) =>
      exceeded ? list.filter((x) => x.at <= budget) : list;
    const logs = [`Program ${META} invoke [1]`, ...upTo(t.logs).map((l) => l.line)];
    if (!exceeded) logs.push(...extra);
    logs.push(`Program ${META} consumed ${used} of ${budget} compute units`);
    // The real program runs out between two BPF instructions (rarely inside a syscall, which
    // the runtime reports as ComputationalBudgetExceeded instead).
    const finalErr: IxErrorJson | null = exceeded ? "ProgramFailedToComplete" : err;
    if (finalErr === null) logs.push(`Program ${META} success`);
    else if (exceeded) logs.push(`Program ${META} failed: exceeded CUs meter at BPF instruction`);
    else logs.push(`Program ${META} failed: ${failText(finalErr)}`);
    return {
      err: finalErr,
      logs,
      unitsConsumed: used,
      // A node lists the CPIs a failed instruction made too.
      innerInstructions: upTo(t.inner).map((i) => i.ix),
      writes: [],
    };
  };

  if (data[0] === UPDATE_METADATA_ACCOUNT_V2_DISCRIMINATOR) {
    return runUpdateMetadataAccountV2(accounts, data, env);
  }
  if (data[0] !== CREATE_METADATA_ACCOUNT_V3_DISCRIMINATOR) {
    return finish("UnsupportedProgramId", [
      `Program log: embedded chain: Token Metadata instruction ${
        data[0] ?? "(empty)"
      } is not supported; only CreateMetadataAccountV3 (33) and UpdateMetadataAccountV2 (15) are emulated. Set TOKEN_METADATA_PROGRAM_SO to run the real program.`,
    ], 1_000);
  }
  t.at = CU_AT.instructionLog;
  t.log("Program log: IX: Create Metadata Accounts v3");
  try {
    const { writes, units } = createMetadataAccountV3(accounts, data, env, t);
    const result = finish(null, [], units);
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
  t: Trace,
): { writes: { index: number; account: AccountSnap }[]; units: number } {
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

  // levy(): refuse an account that already holds data (ExpectedUninitializedAccount), then fund
  // it with rent + the protocol fee before anything else.
  if ((env.get(metadata.index)?.data.length ?? 0) > 0) {
    throw metadataError(E.ExpectedUninitializedAccount, CU_AT.alreadyInitialized);
  }
  const { rent, protocolFee } = metadataCreateLamports((n) => env.rentExemptMinimum(n));
  const levy = rent + protocolFee;
  cpiPrivileges(payer, true, true);
  cpiPrivileges(metadata, false, true);
  const payerAcc = env.get(payer.index);
  const payerLamports = payerAcc?.lamports ?? 0n;
  t.at = CU_AT.levy;
  t.log(`Program ${SYS} invoke [2]`);
  t.cpi(systemIx(system.index, [payer.index, metadata.index], 2, u64le(levy)));
  if (payerAcc && payerAcc.data.length > 0) {
    throw new Failure({ Custom: 0 }, [
      "Transfer: `from` must not carry data",
      `Program ${SYS} failed: invalid program argument`,
    ], CU_AT.levy);
  }
  if (payerLamports < levy) {
    throw new Failure({ Custom: 1 }, [
      `Transfer: insufficient lamports ${payerLamports}, need ${levy}`,
      `Program ${SYS} failed: custom program error: 0x1`,
    ], CU_AT.levy);
  }
  t.log(`Program ${SYS} success`);

  // process_create_metadata_accounts_logic
  const early = CU_AT.mintChecks;
  const mintAcc = env.get(mint.index);
  const mintData = mintAcc?.data ?? new Uint8Array(0);
  if (mintData.length < 36) {
    throw new Failure("ProgramFailedToComplete", [
      `Program log: mint ${mint.keyStr} has ${mintData.length} bytes of data; it is not an SPL Token mint`,
    ], early);
  }
  const tag = readU32(mintData, 0);
  if (tag > 1) throw new Failure("InvalidAccountData", [], early);
  if (tag === 0) throw metadataError(E.InvalidMintAuthority, early);
  if (new PublicKey(mintData.subarray(4, 36)).toBase58() !== mintAuthority.keyStr) {
    throw metadataError(E.InvalidMintAuthority, early);
  }
  if (!mintAuthority.isSigner) throw metadataError(E.NotMintAuthority, early);
  const mintOwner = mintAcc!.ownerStr;
  if (mintOwner !== TOKEN_PROGRAM && mintOwner !== TOKEN_2022_PROGRAM) {
    throw metadataError(E.IncorrectOwner, early);
  }
  const mintKey = new PublicKey(mint.key);
  // The program derives the PDA with find_program_address: every bump tried costs compute.
  const [expectedMetadata, metadataBump] = metadataPdaWithBump(mintKey);
  const derived = CU_PER_BUMP_TRIED * (255 - metadataBump);
  if (expectedMetadata.toBase58() !== metadata.keyStr) {
    throw metadataError(E.InvalidMetadataKey, CU_AT.metadataKeyCheck + derived);
  }

  // create_or_allocate_account_raw: already funded by the levy, so allocate + assign only.
  const metaAcc = env.get(metadata.index);
  t.at = CU_AT.allocate + derived;
  t.log("Program log: Allocate space for the account", `Program ${SYS} invoke [2]`);
  t.cpi(systemIx(system.index, [metadata.index], 8, u64le(BigInt(MAX_METADATA_LEN))));
  if (metaAcc && (metaAcc.data.length > 0 || metaAcc.ownerStr !== SYS)) {
    throw new Failure({ Custom: 0 }, [
      `Allocate: account Address { address: ${metadata.keyStr}, base: None } already in use`,
      `Program ${SYS} failed: custom program error: 0x0`,
    ], t.at);
  }
  t.log(`Program ${SYS} success`);
  t.at = CU_AT.assign + derived;
  t.log("Program log: Assign the account to the owning program");
  t.log(`Program ${SYS} invoke [2]`, `Program ${SYS} success`);
  t.cpi(systemIx(system.index, [metadata.index], 1, OWNER_BYTES));
  const late = CU_AT.dataChecks + derived;

  // assert_data_valid and friends
  const d = args.data;
  const enc = new TextEncoder();
  if (enc.encode(d.name).length > MAX_NAME_LENGTH) {
    throw metadataError(E.NameTooLong, late);
  }
  if (enc.encode(d.symbol).length > MAX_SYMBOL_LENGTH) {
    throw metadataError(E.SymbolTooLong, late);
  }
  if (enc.encode(d.uri).length > MAX_URI_LENGTH) throw metadataError(E.UriTooLong, late);
  if (d.sellerFeeBasisPoints > 10_000) throw metadataError(E.InvalidBasisPoints, late);
  const creators = d.creators.__option === "Some" ? d.creators.value : null;
  if (creators) validateCreators(creators, updateAuthority, late);
  if (d.uses.__option === "Some") {
    const u = d.uses.value;
    const single = u.useMethod === UseMethod.Single && (u.total !== 1n || u.remaining !== 1n);
    const multiple = u.useMethod === UseMethod.Multiple &&
      (u.total < 2n || u.total < u.remaining);
    if (single || multiple) throw metadataError(E.InvalidUseMethod, late);
  }
  if (d.collection.__option === "Some" && d.collection.value.verified) {
    throw metadataError(E.CollectionCannotBeVerifiedInThisInstruction, late);
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
  const units = createUnits(mintKey, metadataBump, d);
  const writes = [
    { index: payer.index, account: payerAcc!.with({ lamports: payerLamports - levy }) },
    {
      index: metadata.index,
      account: newAccount(prevMetaLamports + levy, accountData, OWNER_BYTES, metaAcc),
    },
  ];
  return { writes, units };
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

function validateCreators(creators: Creator[], updateAuthority: IxAccount, late: number): void {
  if (creators.length > MAX_CREATOR_LIMIT) throw metadataError(E.CreatorsTooLong, late);
  if (creators.length === 0) throw metadataError(E.CreatorsMustBeAtleastOne, late);
  const seen = new Set<string>();
  let total = 0;
  for (const c of creators) {
    const addr = c.address.toString();
    if (seen.has(addr)) throw metadataError(E.DuplicateCreatorAddress, late);
    seen.add(addr);
    total += c.share;
    if (total > 255) throw metadataError(E.NumericalOverflowError, late);
    // Only the update authority can verify itself, and only by signing.
    if (c.verified && !(addr === updateAuthority.keyStr && updateAuthority.isSigner)) {
      throw metadataError(E.CannotVerifyAnotherCreator, late);
    }
  }
  if (total !== 100) throw metadataError(E.ShareTotalMustBe100, late);
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
