/**
 * The update decision, pure: the request, the token's state as the chain holds it now
 * (update-state.ts), the hosted document at a new metadataUri (if it is one of ours) and the
 * accounts at addresses an authority goes to. It refuses before anything is built, naming the
 * field and why (immutable metadata, an authority already revoked, a signer that is not the
 * authority, an address that could be a typo), or says what changes and what the token is after.
 */
import { PublicKey } from "@solana/web3.js";
import { reject, type Rejection } from "../kernel/rejection.ts";
import { type RecipientAccount, recipientProblem } from "./recipient.ts";
import type { UpdateRequest } from "./update-request.ts";
import type { TokenState } from "./update-state.ts";

/** What the token is: name, symbol, uri and who holds each authority (null: nobody). */
export interface TokenView {
  name: string;
  symbol: string;
  uri: string;
  updateAuthority: string | null;
  isMutable: boolean;
  mintAuthority: string | null;
  freezeAuthority: string | null;
}

export interface UpdateChanges {
  /** New name, symbol and uri, or null: the metadata's text stays. */
  metadata: { name: string; symbol: string; uri: string } | null;
  /** A new update authority, or null: it stays (or goes with immutability). */
  updateAuthority: string | null;
  makeImmutable: boolean;
  /** undefined: unchanged; null: revoked; an address: handed over. */
  mintAuthority: string | null | undefined;
  freezeAuthority: string | null | undefined;
  before: TokenView;
  after: TokenView;
}

/** The hosted document at metadataUri: its name and symbol, "missing" on our origin, null: not ours. */
export type HostedAnswer = { name: string; symbol: string } | "missing" | null;

export interface UpdateInputs {
  req: UpdateRequest;
  state: TokenState;
  hosted: HostedAnswer;
  /** The account at each address an authority is handed to (null: none there). */
  handedAccounts: ReadonlyMap<string, RecipientAccount | null>;
}

export function viewOf(s: TokenState): TokenView {
  return {
    name: s.metadata?.name ?? "",
    symbol: s.metadata?.symbol ?? "",
    uri: s.metadata?.uri ?? "",
    updateAuthority: s.metadata?.updateAuthority ?? null,
    isMutable: s.metadata?.isMutable ?? false,
    mintAuthority: s.mintAuthority,
    freezeAuthority: s.freezeAuthority,
  };
}

/** Refused (every field named at once), or the changes and the token after them. */
export function decideUpdate(i: UpdateInputs): UpdateChanges | Rejection {
  const { req, state } = i;
  const before = viewOf(state);
  const fields: Record<string, string> = {};
  const authorityProblems: string[] = [];

  const metadataFields = (["metadataUri", "updateAuthority", "isMutable"] as const).filter((f) =>
    f === "isMutable" ? req.makeImmutable : req[f] !== null
  );
  if (metadataFields.length > 0) {
    const why = !state.metadata
      ? "the token has no metadata on chain"
      : !state.metadata.isMutable
      ? "the metadata is immutable; it can never change again"
      : null;
    if (why) { for (const f of metadataFields) fields[f] = why; }
    else if (state.metadata!.updateAuthority !== req.authority) {
      authorityProblems.push(
        `the metadata's update authority is ${state.metadata!.updateAuthority}`,
      );
    }
  }
  for (const f of ["mintAuthority", "freezeAuthority"] as const) {
    if (req[f] === undefined) continue;
    const holder = state[f];
    const what = f === "mintAuthority" ? "mint" : "freeze";
    if (holder === null) {
      fields[f] = `the ${what} authority was revoked; nobody can hand it over or revoke it again`;
    } else if (holder !== req.authority) {
      authorityProblems.push(`the ${what} authority is ${holder}`);
    } else if (req[f] === holder) {
      fields[f] = `is already the ${what} authority; nothing would change`;
    }
  }
  if (authorityProblems.length > 0) {
    fields.authority = `must sign as the current authority of every change asked: ${
      authorityProblems.join("; ")
    }`;
  }

  for (const f of ["updateAuthority", "mintAuthority", "freezeAuthority"] as const) {
    const to = req[f];
    if (typeof to !== "string" || f in fields) continue;
    const problem = recipientProblem(new PublicKey(to), i.handedAccounts.get(to) ?? null);
    if (problem) fields[f] = problem;
  }
  if (req.updateAuthority !== null && req.updateAuthority === before.updateAuthority) {
    fields.updateAuthority ??= "is already the update authority; nothing would change";
  }

  const metadata = req.metadataUri === null ? null : newText(i, before, fields);
  if (Object.keys(fields).length > 0) {
    return reject(
      "invalid_request",
      "The update cannot be built against the token as it is",
      fields,
    );
  }
  const after: TokenView = {
    ...before,
    ...(metadata ?? {}),
    // Token-2022's immutable metadata has no update authority; a Metaplex account keeps its
    // (it can change nothing once isMutable is false).
    updateAuthority: req.makeImmutable && state.tokenProgram === "token-2022"
      ? null
      : req.updateAuthority ?? before.updateAuthority,
    isMutable: req.makeImmutable ? false : before.isMutable,
    mintAuthority: req.mintAuthority === undefined ? before.mintAuthority : req.mintAuthority,
    freezeAuthority: req.freezeAuthority === undefined
      ? before.freezeAuthority
      : req.freezeAuthority,
  };
  return {
    metadata,
    updateAuthority: req.updateAuthority,
    makeImmutable: req.makeImmutable,
    mintAuthority: req.mintAuthority,
    freezeAuthority: req.freezeAuthority,
    before,
    after,
  };
}

/**
 * The new name, symbol and uri: a hosted document's name and symbol (as a build must carry them,
 * hosted-match.ts), else those given, else the token's own.
 */
function newText(
  i: UpdateInputs,
  before: TokenView,
  fields: Record<string, string>,
): { name: string; symbol: string; uri: string } | null {
  const { req, hosted } = i;
  const uri = req.metadataUri!;
  if (hosted === "missing") {
    fields.metadataUri = "no document is hosted at this URL; POST /v1/metadata first";
    return null;
  }
  const text = {
    name: hosted?.name ?? req.name ?? before.name,
    symbol: hosted?.symbol ?? req.symbol ?? before.symbol,
    uri,
  };
  if (hosted) {
    for (const f of ["name", "symbol"] as const) {
      if (req[f] !== null && req[f] !== hosted[f]) {
        fields[f] = `must be ${JSON.stringify(hosted[f])}, the ${f} of the hosted document at ` +
          "metadataUri";
      }
    }
  }
  if (text.uri === before.uri && text.name === before.name && text.symbol === before.symbol) {
    fields.metadataUri ??=
      "is already the token's, with the same name and symbol; nothing would change";
  }
  return text;
}
