/**
 * The build decision: does the purchase still have a token build left today, and if so the
 * `TokenBuilt` fact with the next build id. Pure: the clock and the state come in as arguments,
 * so `store.transact` can re-run it on conflict and a test can call it directly.
 */
import type { TokenBuilt } from "../../events/types.ts";
import type { UsageDoc } from "../../projections/usage.ts";
import { type KeyDoc, stillInForce } from "../../projections/keys.ts";
import { utcDay } from "../kernel/time.ts";
import { isRejection, reject, type Rejection } from "../kernel/rejection.ts";
import { tokensPerDay } from "./tokens-per-day.ts";
import type { PayerConductDoc } from "../../projections/conduct.ts";
import { payerRefusal } from "../conduct/policy.ts";
import type { ConductPolicy } from "../config.ts";

/** Everything about the build that was settled before the store is touched. */
export type BuildDraft = Omit<TokenBuilt["data"], "buildId" | "keyId" | "purchaseId" | "day">;

export interface BuildCommand {
  keyId: string;
  purchaseId: string;
  /** ms since the epoch; decides which UTC day the build counts against. */
  now: number;
  tokensPerDay: number;
  conduct: ConductPolicy;
  draft: BuildDraft;
}

export interface BuildState {
  /** Today's usage of the purchase (the `usage` projection), null if nothing yet. */
  usage: UsageDoc | null;
  /** The highest build id ever allocated, null before the first build. */
  lastBuildId: number | null;
  /** The payer wallet's unverified landings so far, null if none. */
  payer: PayerConductDoc | null;
}

export function decideBuild(cmd: BuildCommand, state: BuildState): TokenBuilt | Rejection {
  const payer = payerRefusal(state.payer, cmd.conduct);
  if (payer) return reject("invalid_request", "Request is invalid", { payer });
  const refused = tokensPerDay.rejection(cmd, tokensPerDay.used(state.usage), cmd.now);
  if (refused) return refused;
  return {
    type: "TokenBuilt",
    v: 1,
    data: {
      buildId: (state.lastBuildId ?? 0) + 1,
      keyId: cmd.keyId,
      purchaseId: cmd.purchaseId,
      day: utcDay(cmd.now),
      ...cmd.draft,
    },
  };
}

/** What the runner runs: the build, with the key the request was authenticated with. */
export interface BuildCall extends BuildCommand {
  authenticated: Pick<KeyDoc, "secretMac">;
}

export interface BuildCallState extends BuildState {
  /** The caller's key as it is now. */
  key: KeyDoc | null;
}

/** A ban, deletion or rotation that landed while the build was on the RPC wins over it. */
export function decideBuildCall(cmd: BuildCall, state: BuildCallState): TokenBuilt[] | Rejection {
  if (!stillInForce(state.key, cmd.authenticated)) {
    return reject("unauthorized", "The API key is no longer valid");
  }
  const decided = decideBuild(cmd, state);
  return isRejection(decided) ? decided : [decided];
}
