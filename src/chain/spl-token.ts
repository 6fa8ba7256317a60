/**
 * SPL Token / Token-2022 account layouts as the node's account decoder reads them, for token
 * balances in transaction meta, getTokenAccountBalance/getTokenSupply and jsonParsed accounts.
 */
import { base58Encode, readU32, readU64 } from "./codec.ts";

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const MINT_LEN = 82;
export const ACCOUNT_LEN = 165;
/** Token-2022 puts an AccountType byte right after the base account length. */
const ACCOUNT_TYPE_OFFSET = ACCOUNT_LEN;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

export interface MintState {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: string | null;
}

export interface TokenAccountState {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  state: "uninitialized" | "initialized" | "frozen";
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
}

function coptionKey(data: Uint8Array, off: number): string | null {
  return readU32(data, off) === 1 ? base58Encode(data.subarray(off + 4, off + 36)) : null;
}

export function parseMint(data: Uint8Array, owner: string): MintState | null {
  if (!isTokenProgram(owner) || data.length < MINT_LEN) return null;
  if (data.length !== MINT_LEN) {
    if (owner !== TOKEN_2022_PROGRAM || data.length <= ACCOUNT_TYPE_OFFSET) return null;
    if (data[ACCOUNT_TYPE_OFFSET] !== ACCOUNT_TYPE_MINT) return null;
  }
  if (data[45] !== 1) return null;
  return {
    mintAuthority: coptionKey(data, 0),
    supply: readU64(data, 36),
    decimals: data[44],
    isInitialized: true,
    freezeAuthority: coptionKey(data, 46),
  };
}

export function parseTokenAccount(data: Uint8Array, owner: string): TokenAccountState | null {
  if (!isTokenProgram(owner) || data.length < ACCOUNT_LEN) return null;
  if (data.length !== ACCOUNT_LEN) {
    if (owner !== TOKEN_2022_PROGRAM || data[ACCOUNT_TYPE_OFFSET] !== ACCOUNT_TYPE_ACCOUNT) {
      return null;
    }
  }
  const stateByte = data[108];
  if (stateByte === 0) return null;
  return {
    mint: base58Encode(data.subarray(0, 32)),
    owner: base58Encode(data.subarray(32, 64)),
    amount: readU64(data, 64),
    delegate: coptionKey(data, 72),
    state: stateByte === 2 ? "frozen" : "initialized",
    isNative: readU32(data, 109) === 1 ? readU64(data, 113) : null,
    delegatedAmount: readU64(data, 121),
    closeAuthority: coptionKey(data, 129),
  };
}

export interface UiTokenAmount {
  uiAmount: number | null;
  decimals: number;
  amount: string;
  uiAmountString: string;
}

/** The node's `token_amount_to_ui_amount`: exact decimal string, trailing zeros trimmed. */
export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const raw = amount.toString();
  let s: string;
  if (decimals === 0) {
    s = raw;
  } else {
    const padded = raw.padStart(decimals + 1, "0");
    const int = padded.slice(0, padded.length - decimals);
    const frac = padded.slice(padded.length - decimals).replace(/0+$/, "");
    s = frac ? `${int}.${frac}` : int;
  }
  return { uiAmount: Number(s), decimals, amount: raw, uiAmountString: s };
}

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

export interface RawAccount {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable: boolean;
}

/**
 * Token balances of a transaction's accounts in one state; `mintOf` reads a mint's decimals
 * (the node reads them from the bank, so a mint created by the transaction itself counts).
 */
export function collectTokenBalances(
  accounts: (RawAccount | null)[],
  mintDecimals: (mint: string) => number | null,
): TokenBalance[] {
  const out: TokenBalance[] = [];
  accounts.forEach((a, i) => {
    if (!a || a.executable) return;
    const t = parseTokenAccount(a.data, a.owner);
    if (!t) return;
    const decimals = mintDecimals(t.mint);
    if (decimals === null) return;
    out.push({
      accountIndex: i,
      mint: t.mint,
      owner: t.owner,
      programId: a.owner,
      uiTokenAmount: uiTokenAmount(t.amount, decimals),
    });
  });
  return out;
}

/** jsonParsed form of a token program account, or null when the node would fall back to binary. */
export function parseTokenProgramAccount(
  data: Uint8Array,
  owner: string,
  mintDecimals: (mint: string) => number | null,
): { program: string; parsed: unknown; space: number } | null {
  const program = owner === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
  const mint = parseMint(data, owner);
  if (mint) {
    return {
      program,
      parsed: {
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority,
          isInitialized: mint.isInitialized,
          mintAuthority: mint.mintAuthority,
          supply: mint.supply.toString(),
        },
        type: "mint",
      },
      space: data.length,
    };
  }
  const acc = parseTokenAccount(data, owner);
  if (!acc) return null;
  const decimals = mintDecimals(acc.mint);
  if (decimals === null) return null;
  const info: Record<string, unknown> = {
    isNative: acc.isNative !== null,
    mint: acc.mint,
    owner: acc.owner,
    state: acc.state,
    tokenAmount: uiTokenAmount(acc.amount, decimals),
  };
  if (acc.delegate) {
    info.delegate = acc.delegate;
    info.delegatedAmount = uiTokenAmount(acc.delegatedAmount, decimals);
  }
  if (acc.isNative !== null) info.rentExemptReserve = uiTokenAmount(acc.isNative, decimals);
  if (acc.closeAuthority) info.closeAuthority = acc.closeAuthority;
  return { program, parsed: { info, type: "account" }, space: data.length };
}
