/**
 * jsonParsed instruction decoding for the programs the node's transaction-status parser knows
 * and our flows use: System, SPL Token / Token-2022 (common instructions), Associated Token
 * Account and Memo. Anything else is returned partially decoded, as the node does.
 */
import { base58Encode, readU32, readU64 } from "./codec.ts";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM, uiTokenAmount } from "./spl-token.ts";

const SYSTEM = "11111111111111111111111111111111";
const ATA = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
const MEMO_V2 = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
const MEMO_V1 = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo";

export interface ParsedIx {
  program: string;
  programId: string;
  parsed: unknown;
  stackHeight: number | null;
}

export interface PartiallyDecodedIx {
  accounts: string[];
  data: string;
  programId: string;
  stackHeight: number | null;
}

export function parseInstruction(
  programId: string,
  accounts: string[],
  data: Uint8Array,
  stackHeight: number | null,
): ParsedIx | PartiallyDecodedIx {
  let parsed: { program: string; parsed: unknown } | null = null;
  try {
    if (programId === SYSTEM) parsed = { program: "system", parsed: parseSystem(accounts, data) };
    else if (programId === TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM) {
      const p = parseToken(accounts, data);
      parsed = p === null ? null : {
        program: programId === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022",
        parsed: p,
      };
    } else if (programId === ATA) {
      parsed = { program: "spl-associated-token-account", parsed: parseAta(accounts, data) };
    } else if (programId === MEMO_V2 || programId === MEMO_V1) {
      parsed = {
        program: "spl-memo",
        parsed: new TextDecoder("utf-8", { fatal: true }).decode(data),
      };
    }
  } catch {
    parsed = null;
  }
  if (parsed && parsed.parsed !== null) return { ...parsed, programId, stackHeight };
  return { accounts, data: base58Encode(data), programId, stackHeight };
}

function parseSystem(a: string[], d: Uint8Array): unknown {
  const kind = readU32(d, 0);
  switch (kind) {
    case 0:
      return {
        info: {
          lamports: Number(readU64(d, 4)),
          newAccount: a[1],
          owner: base58Encode(d.subarray(20, 52)),
          source: a[0],
          space: Number(readU64(d, 12)),
        },
        type: "createAccount",
      };
    case 1:
      return { info: { account: a[0], owner: base58Encode(d.subarray(4, 36)) }, type: "assign" };
    case 2:
      return {
        info: { destination: a[1], lamports: Number(readU64(d, 4)), source: a[0] },
        type: "transfer",
      };
    case 3: {
      const base = base58Encode(d.subarray(4, 36));
      const seedLen = Number(readU64(d, 36));
      const seed = new TextDecoder().decode(d.subarray(44, 44 + seedLen));
      const o = 44 + seedLen;
      return {
        info: {
          base,
          lamports: Number(readU64(d, o)),
          newAccount: a[1],
          owner: base58Encode(d.subarray(o + 16, o + 48)),
          seed,
          source: a[0],
          space: Number(readU64(d, o + 8)),
        },
        type: "createAccountWithSeed",
      };
    }
    case 8:
      return { info: { account: a[0], space: Number(readU64(d, 4)) }, type: "allocate" };
    case 9:
    case 10: {
      // AllocateWithSeed { base, seed, space, owner } / AssignWithSeed { base, seed, owner }.
      const base = base58Encode(d.subarray(4, 36));
      const seedLen = Number(readU64(d, 36));
      const seed = new TextDecoder("utf-8", { fatal: true }).decode(d.subarray(44, 44 + seedLen));
      const o = 44 + seedLen;
      if (d.length < o + (kind === 10 ? 32 : 40)) return null;
      if (kind === 10) {
        return {
          info: { account: a[0], base, owner: base58Encode(d.subarray(o, o + 32)), seed },
          type: "assignWithSeed",
        };
      }
      return {
        info: {
          account: a[0],
          base,
          owner: base58Encode(d.subarray(o + 8, o + 40)),
          seed,
          space: Number(readU64(d, o)),
        },
        type: "allocateWithSeed",
      };
    }
  }
  return null;
}

const AUTHORITY_TYPES = ["mintTokens", "freezeAccount", "accountOwner", "closeAccount"];

function optionKey(d: Uint8Array, off: number): [string | null, number] {
  return d[off] === 1 ? [base58Encode(d.subarray(off + 1, off + 33)), off + 33] : [null, off + 1];
}

function parseToken(a: string[], d: Uint8Array): unknown {
  const amount = () => readU64(d, 1).toString();
  switch (d[0]) {
    case 0:
    case 20: {
      const [freeze] = optionKey(d, 34);
      const info: Record<string, unknown> = {
        decimals: d[1],
        mint: a[0],
        mintAuthority: base58Encode(d.subarray(2, 34)),
      };
      if (freeze) info.freezeAuthority = freeze;
      if (d[0] === 0) info.rentSysvar = a[1];
      return { info, type: d[0] === 0 ? "initializeMint" : "initializeMint2" };
    }
    case 1:
      return {
        info: { account: a[0], mint: a[1], owner: a[2], rentSysvar: a[3] },
        type: "initializeAccount",
      };
    case 16:
    case 18:
      return {
        info: { account: a[0], mint: a[1], owner: base58Encode(d.subarray(1, 33)) },
        type: d[0] === 16 ? "initializeAccount2" : "initializeAccount3",
      };
    case 3:
      return {
        info: { amount: amount(), authority: a[2], destination: a[1], source: a[0] },
        type: "transfer",
      };
    case 4:
      return {
        info: { amount: amount(), delegate: a[1], owner: a[2], source: a[0] },
        type: "approve",
      };
    case 5:
      return { info: { owner: a[1], source: a[0] }, type: "revoke" };
    case 6: {
      const [newAuthority] = optionKey(d, 2);
      const target = d[1] === 0 ? "mint" : "account";
      return {
        info: {
          authority: a[1],
          authorityType: AUTHORITY_TYPES[d[1]] ?? String(d[1]),
          newAuthority,
          [target]: a[0],
        },
        type: "setAuthority",
      };
    }
    case 7:
      return {
        info: { account: a[1], amount: amount(), mint: a[0], mintAuthority: a[2] },
        type: "mintTo",
      };
    case 8:
      return {
        info: { account: a[0], amount: amount(), authority: a[2], mint: a[1] },
        type: "burn",
      };
    case 9:
      return { info: { account: a[0], destination: a[1], owner: a[2] }, type: "closeAccount" };
    case 10:
      return { info: { account: a[0], freezeAuthority: a[2], mint: a[1] }, type: "freezeAccount" };
    case 11:
      return { info: { account: a[0], freezeAuthority: a[2], mint: a[1] }, type: "thawAccount" };
    case 12:
      return {
        info: {
          authority: a[3],
          destination: a[2],
          mint: a[1],
          source: a[0],
          tokenAmount: uiTokenAmount(readU64(d, 1), d[9]),
        },
        type: "transferChecked",
      };
    case 14:
      return {
        info: {
          account: a[1],
          mint: a[0],
          mintAuthority: a[2],
          tokenAmount: uiTokenAmount(readU64(d, 1), d[9]),
        },
        type: "mintToChecked",
      };
    case 15:
      return {
        info: {
          account: a[0],
          authority: a[2],
          mint: a[1],
          tokenAmount: uiTokenAmount(readU64(d, 1), d[9]),
        },
        type: "burnChecked",
      };
    case 17:
      return { info: { account: a[0] }, type: "syncNative" };
  }
  return null;
}

function parseAta(a: string[], d: Uint8Array): unknown {
  const kind = d.length === 0 ? 0 : d[0];
  const info = {
    account: a[1],
    mint: a[3],
    source: a[0],
    systemProgram: a[4],
    tokenProgram: a[5],
    wallet: a[2],
  };
  if (kind === 0) return { info, type: "create" };
  if (kind === 1) return { info, type: "createIdempotent" };
  return null;
}
