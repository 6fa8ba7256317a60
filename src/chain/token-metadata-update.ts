/**
 * The emulated Token Metadata program's UpdateMetadataAccountV2 (token-metadata-program.ts runs
 * CreateMetadataAccountV3): the real program's `process_update_metadata_accounts_v2` checks in its
 * order, with its error codes: the account is the program's, the update authority is the one
 * recorded and signed, new data only while mutable (and valid), `isMutable` only flipped to false.
 * The account keeps its size and lamports (the program rewrites it in place, fee flag kept).
 * Pure: it reads through `env` and reports the write.
 */
import { getMetadataAccountDataSerializer } from "@metaplex-foundation/mpl-token-metadata";
import type { PublicKey as UmiPublicKey } from "@metaplex-foundation/umi";
import {
  MAX_METADATA_LEN,
  MAX_NAME_LENGTH,
  MAX_SYMBOL_LENGTH,
  MAX_URI_LENGTH,
  METADATA_FEE_FLAG_OFFSET,
  TOKEN_METADATA_PROGRAM_ID,
} from "../solana/token-metadata.ts";
import { decodeUpdateMetadataAccountV2Data } from "../solana/token-metadata-update.ts";
import type { IxErrorJson } from "../solana/tx-error.ts";
import type { AccountSnap } from "./accounts.ts";

/**
 * What this instruction reads and reports, as token-metadata-program.ts's `IxAccount`,
 * `ProgramEnv` and `ProgramResult` give it (structurally the same; that module dispatches here).
 */
interface IxAccount {
  index: number;
  keyStr: string;
  isSigner: boolean;
}
interface ProgramEnv {
  get(index: number): AccountSnap | null;
  cuRemaining: number;
}
interface ProgramResult {
  err: IxErrorJson | null;
  logs: string[];
  unitsConsumed: number;
  innerInstructions: never[];
  writes: { index: number; account: AccountSnap }[];
}

const META = TOKEN_METADATA_PROGRAM_ID.toBase58();
/**
 * Compute the emulation reports for an update: above the real program's 24,861 CU for an update of a
 * token this service created (tests/chain/token-metadata-update.test.ts), so a limit sized from
 * it holds.
 */
export const CU_UPDATE = 30_000;

/** MetadataError codes of the real program this instruction can fail with. */
const E = {
  UpdateAuthorityIncorrect: [7, "Update Authority given does not match"],
  UpdateAuthorityIsNotSigner: [8, "Update Authority needs to be signer to update metadata"],
  NameTooLong: [11, "Name too long"],
  SymbolTooLong: [12, "Symbol too long"],
  UriTooLong: [13, "URI too long"],
  IncorrectOwner: [57, "Incorrect account owner"],
  DataIsImmutable: [59, "Data is immutable"],
  IsMutableCanOnlyBeFlippedToFalse: [73, "Is Mutable can only be flipped to false"],
} as const satisfies Record<string, readonly [number, string]>;

const metadataSerializer = getMetadataAccountDataSerializer();

function result(
  err: IxErrorJson | null,
  extra: string[],
  cu: number,
  budget: number,
): ProgramResult {
  const used = Math.min(cu, budget);
  const logs = [
    `Program ${META} invoke [1]`,
    "Program log: IX: Update Metadata Accounts v2",
    ...extra,
    `Program ${META} consumed ${used} of ${budget} compute units`,
    err === null
      ? `Program ${META} success`
      : `Program ${META} failed: ${
        typeof err === "object" && "Custom" in err
          ? `custom program error: 0x${err.Custom.toString(16)}`
          : String(err)
      }`,
  ];
  return { err, logs, unitsConsumed: used, innerInstructions: [], writes: [] };
}

const fail = (e: readonly [number, string], budget: number) =>
  result({ Custom: e[0] }, [`Program log: ${e[1]}`], 8_000, budget);

/** Runs UpdateMetadataAccountV2 (discriminator 15). */
export function runUpdateMetadataAccountV2(
  accounts: IxAccount[],
  data: Uint8Array,
  env: ProgramEnv,
): ProgramResult {
  const budget = env.cuRemaining;
  if (budget < CU_UPDATE) return result("ProgramFailedToComplete", [], budget, budget);
  if (accounts.length < 2) return result("NotEnoughAccountKeys", [], 600, budget);
  const [metadata, authority] = accounts;
  let args;
  try {
    args = decodeUpdateMetadataAccountV2Data(data);
  } catch {
    return result("InvalidInstructionData", [], 900, budget);
  }
  const acc = env.get(metadata.index);
  if (!acc || acc.data.length === 0) return result("UninitializedAccount", [], 2_000, budget);
  let m;
  try {
    [m] = metadataSerializer.deserialize(acc.data);
  } catch {
    return result("InvalidAccountData", [], 2_000, budget);
  }
  if (acc.ownerStr !== META) return fail(E.IncorrectOwner, budget);
  if (m.updateAuthority.toString() !== authority.keyStr) {
    return fail(E.UpdateAuthorityIncorrect, budget);
  }
  if (!authority.isSigner) return fail(E.UpdateAuthorityIsNotSigner, budget);

  const next = { ...m };
  if (args.data.__option === "Some") {
    if (!m.isMutable) return fail(E.DataIsImmutable, budget);
    const d = args.data.value;
    const enc = new TextEncoder();
    if (enc.encode(d.name).length > MAX_NAME_LENGTH) return fail(E.NameTooLong, budget);
    if (enc.encode(d.symbol).length > MAX_SYMBOL_LENGTH) return fail(E.SymbolTooLong, budget);
    if (enc.encode(d.uri).length > MAX_URI_LENGTH) return fail(E.UriTooLong, budget);
    Object.assign(next, {
      name: puff(d.name, MAX_NAME_LENGTH),
      symbol: puff(d.symbol, MAX_SYMBOL_LENGTH),
      uri: puff(d.uri, MAX_URI_LENGTH),
      sellerFeeBasisPoints: d.sellerFeeBasisPoints,
      creators: d.creators,
      uses: d.uses,
      // Only an unverified collection may be set here; this service never sets one.
      collection: d.collection,
    });
  }
  if (args.newUpdateAuthority.__option === "Some") {
    next.updateAuthority = args.newUpdateAuthority.value as UmiPublicKey;
  }
  if (args.isMutable.__option === "Some") {
    if (args.isMutable.value && !m.isMutable) {
      return fail(E.IsMutableCanOnlyBeFlippedToFalse, budget);
    }
    next.isMutable = args.isMutable.value;
  }
  const body = metadataSerializer.serialize(next);
  // Rewritten in place: the rest zeroed, the fee flag (last byte) kept.
  const out = new Uint8Array(Math.max(acc.data.length, MAX_METADATA_LEN));
  out.set(body);
  out[METADATA_FEE_FLAG_OFFSET] = acc.data[METADATA_FEE_FLAG_OFFSET] ?? 0;
  const ok = result(null, [], CU_UPDATE, budget);
  ok.writes = [{ index: metadata.index, account: acc.with({ data: out }) }];
  return ok;
}

function puff(s: string, len: number): string {
  const bytes = new TextEncoder().encode(s).length;
  return bytes >= len ? s : s + "\0".repeat(len - bytes);
}
