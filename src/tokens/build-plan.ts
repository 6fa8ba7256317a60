/**
 * The build's first pure steps: whether the store's facts let it start at all (`admitBuild`);
 * from the request, the identifiers drawn for it (seed, reference) and the configuration, the
 * token it makes and then the plan the one RPC round trip simulates.
 * No I/O: the shell (build-token.ts) reads the rent and the price and hands them in.
 *
 * `shapeToken` settles what the request asks for once (its token fields, the transfer fee, the
 * Token-2022 sizes), so the rent, the instructions and the recorded event all read one value.
 */
import type { PayerConductDoc } from "../../projections/conduct.ts";
import { payerRefusal } from "../conduct/policy.ts";

import { PublicKey } from "@solana/web3.js";
import type { BuildRequest } from "./request-schema.ts";
import type { RentTable } from "./rent.ts";
import {
  token2022Metadata,
  type Token2022Sizes,
  token2022Sizes,
  type TransferFeeSpec,
} from "./token-2022.ts";
import { type TokenFields, tokenFields } from "./token-spec.ts";
import {
  type CompiledToken,
  compileToken,
  MAX_COMPUTE_UNIT_LIMIT,
  type TokenAddresses,
  type TokenPlan,
  type TokenProgramName,
} from "./transaction.ts";
import { type TokenFeeConfig, tokenFeeLamports } from "../pricing/token-fee.ts";
import type { UsageDoc } from "../../projections/usage.ts";
import type { ConductPolicy, Limits } from "../config.ts";
import { ApiError } from "../kernel/errors.ts";
import { tokensPerDay } from "./tokens-per-day.ts";

/** What the build reads from configuration. */
export interface BuildSettings extends TokenFeeConfig {
  treasury: PublicKey;
  /** The cap on the priority price (micro-lamports per compute unit). */
  maxPriorityFeeMicroLamports: number;
  /** On a local chain, its RPC URL, where a short payer can be airdropped (null elsewhere). */
  airdropRpc?: string | null;
}

/** What the store holds that may refuse a build before anything is asked of the chain. */
export interface StoreFacts {
  /** The purchase's usage today (the `usage` projection), null if nothing yet. */
  usage: Pick<UsageDoc, "tokens"> | null;
  /** The payer wallet's unverified landings so far (null: none). */
  payer: PayerConductDoc | null;
}

/**
 * The refusals that cost no RPC: a key at its daily limit, a payer refused for its unverified
 * landings. Another check before the build is one more fact in `StoreFacts` and one more line here. The commit checks
 * again (decide.ts); this one only spares the round trip.
 */
export function admitBuild(
  facts: StoreFacts,
  limits: Pick<Limits, "tokensPerDay">,
  conduct: ConductPolicy,
  now: number,
): ApiError | null {
  const limited = tokensPerDay.refusal(limits, tokensPerDay.used(facts.usage), now);
  if (limited) return limited;
  // A wallet that landed a creation without our fee gets nothing more built, on any key.
  const payer = payerRefusal(facts.payer, conduct);
  return payer ? new ApiError("invalid_request", "Request is invalid", { payer }) : null;
}

/** What was drawn or derived for this build before anything is asked of the chain. */
export interface BuildIds {
  seed: string;
  reference: PublicKey;
  addresses: TokenAddresses;
  /** Seeds tried for a vanity address; null when none was asked for. */
  vanityTries: number | null;
}

/** The token a request makes, settled once. */
export interface TokenShape extends BuildIds {
  req: BuildRequest;
  tokenProgram: TokenProgramName;
  fields: TokenFields<bigint>;
  transferFee: TransferFeeSpec | null;
  /** Token-2022 only: the mint's sizes, which its rent and its instructions both follow. */
  token2022Sizes: Token2022Sizes | null;
}

export function shapeToken(req: BuildRequest, ids: BuildIds): TokenShape {
  const tokenProgram = req.tokenProgram ?? "spl-token";
  const fields = tokenFields(req, (raw) => raw);
  const transferFee = req.transferFee
    ? {
      basisPoints: req.transferFee.basisPoints,
      maximum: req.transferFee.maximum,
      authority: req.transferFee.permanent
        ? null
        : req.transferFee.authority
        ? new PublicKey(req.transferFee.authority)
        : req.payer,
    }
    : null;
  const token2022 = tokenProgram === "token-2022"
    ? token2022Sizes(token2022Metadata(ids.addresses.mint, req.payer, fields), !!transferFee)
    : null;
  return { ...ids, req, tokenProgram, fields, transferFee, token2022Sizes: token2022 };
}

/** The plan the round trip simulates, and what else that round trip reads. */
export interface BuildPlan {
  shape: TokenShape;
  plan: TokenPlan;
  /** The simulated transaction: the handed-out one differs only in the compute budget and blockhash. */
  probe: CompiledToken;
  /** The fee in USD and the SOL price it was converted at. */
  feeUsd: number;
  solUsd: number;
  rent: RentTable;
  /**
   * The accounts read beside the simulation: payer, recipient (unless the payer), token account,
   * then each authority handed over (`authorities` names them, in that order), then the durable
   * nonce account when the build uses one.
   */
  accounts: PublicKey[];
  authorities: AuthorityField[];
  /** The durable nonce account (the last of `accounts`), or null: a recent blockhash. */
  nonceAccount: PublicKey | null;
  /** Every account the transaction write-locks, for the fee market. */
  writable: PublicKey[];
}

export const AUTHORITY_FIELDS = ["mintAuthority", "freezeAuthority", "updateAuthority"] as const;
/** A field naming an address an authority is handed to (an error names it as the request does). */
export type AuthorityField = typeof AUTHORITY_FIELDS[number] | "transferFee.authority";

/** Every authority the request hands to an address, with the field that names it. */
function handedAuthorities(shape: TokenShape): [AuthorityField, string][] {
  const out: [AuthorityField, string][] = AUTHORITY_FIELDS.filter((f) => shape.fields[f])
    .map((f) => [f, shape.fields[f]!]);
  const fee = shape.req.transferFee?.authority;
  if (fee) out.push(["transferFee.authority", fee]);
  return out;
}

/** Any well-formed blockhash will do in a simulation whose node replaces it. */
export const PLACEHOLDER_BLOCKHASH = PublicKey.default.toBase58();

/**
 * `rent` is the table this token pays by (for Token-2022, at the shape's sizes); `solUsd` the
 * price the fee is converted at.
 */
export function planBuild(
  shape: TokenShape,
  rent: RentTable,
  solUsd: number,
  settings: BuildSettings,
): BuildPlan {
  const { req, addresses } = shape;
  const plan: TokenPlan = {
    ...addresses,
    payer: req.payer,
    recipient: req.recipient,
    seed: shape.seed,
    reference: shape.reference,
    treasury: settings.treasury,
    ...shape.fields,
    feeLamports: tokenFeeLamports(settings, solUsd),
    mintRentLamports: rent.mint,
    nonceAccount: req.nonceAccount ?? null,
    ...(shape.tokenProgram === "token-2022"
      ? {
        tokenProgram: shape.tokenProgram,
        transferFee: shape.transferFee,
        token2022Sizes: shape.token2022Sizes!,
      }
      : {}),
  };
  // Simulated with the unit limit wide open (so the simulation itself never runs out), no
  // priority price (so it charges only what the balance check covers) and a blockhash the node
  // replaces with its latest, which it returns.
  const probe = compileToken(
    plan,
    { unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit: 0n },
    PLACEHOLDER_BLOCKHASH,
  );
  // The recipient's token account too: lamports already at its address lower its rent.
  const base = req.recipient.equals(req.payer)
    ? [req.payer, addresses.recipientTokenAccount]
    : [req.payer, req.recipient, addresses.recipientTokenAccount];
  // An authority goes to an address as a recipient does: the same policy, the same read.
  const handed = handedAuthorities(shape);
  const authorities = handed.map(([f]) => f);
  const nonceAccount = req.nonceAccount ?? null;
  // The nonce account in the same read: what it must be, and the nonce the message then uses.
  const accounts = [
    ...base,
    ...handed.map(([, a]) => new PublicKey(a)),
    ...(nonceAccount ? [nonceAccount] : []),
  ];
  // Only the payer and the treasury can have a history (the rest are created by this
  // transaction), and the treasury is the one that every build contends for.
  const writable = [
    req.payer,
    addresses.mint,
    addresses.recipientTokenAccount,
    addresses.metadataAccount,
    settings.treasury,
    ...(nonceAccount ? [nonceAccount] : []),
  ].filter((k, i, all) => all.findIndex((o) => o.equals(k)) === i);
  return {
    shape,
    plan,
    probe,
    feeUsd: settings.tokenUsd,
    solUsd,
    rent,
    accounts,
    authorities,
    nonceAccount,
    writable,
  };
}
