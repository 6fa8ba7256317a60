/**
 * The refresh decision behind POST /v1/tokens/{mint}/refresh: a build of the calling key that has
 * not landed is re-issued, the same mint, seed, reference and instructions under a fresh
 * blockhash, as `BuildRefreshed` on the build's stream. Not a new build: nothing is counted
 * against the daily limit. Pure: the build's events, its record and the clock come in.
 */
import { PublicKey } from "@solana/web3.js";
import type { BuildRefreshed, StoredEvent, TokenBuilt } from "../../events/types.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import { type KeyDoc, stillInForce } from "../../projections/keys.ts";
import { reject, type Rejection } from "../kernel/rejection.ts";
import type { BuildRequest } from "./request-schema.ts";

/** Statuses a build may be refreshed in: nothing of it has landed. */
const REFRESHABLE = new Set(["built", "submitted", "expired"]);

/**
 * Why a build cannot be refreshed (its status says it landed, or it is on a durable nonce), or
 * null. A nonce build does not expire, so a fresh blockhash would only trade its lifetime for 60
 * seconds; once its nonce has moved on, it is over, and a new build is the way on.
 */
export function refreshRefusal(
  b: Pick<BuildDoc, "status" | "nonceAccount">,
): Rejection | null {
  if (b.nonceAccount && REFRESHABLE.has(b.status)) {
    return reject("invalid_request", "Request is invalid", {
      mint: b.status === "expired"
        ? "the build's durable nonce moved on without it landing; build again"
        : "the build uses a durable nonce and does not expire: sign and send the transaction " +
          "as built, there is nothing to refresh",
    });
  }
  if (REFRESHABLE.has(b.status)) return null;
  return reject("invalid_request", "Request is invalid", {
    mint: `the build has landed (${b.status}); there is nothing to refresh`,
  });
}

/** The request the build was made from, as its `TokenBuilt` recorded it. */
export function requestOf(d: TokenBuilt["data"]): BuildRequest {
  return {
    payer: new PublicKey(d.payer),
    recipient: new PublicKey(d.recipient),
    name: d.name,
    symbol: d.symbol,
    metadataUri: d.uri,
    decimals: d.decimals,
    supplyRaw: BigInt(d.supplyRaw),
    revokeMint: d.revokeMint,
    revokeFreeze: d.revokeFreeze,
    immutableMetadata: d.immutableMetadata,
    tokenProgram: d.tokenProgram ?? "spl-token",
    transferFee: d.transferFee
      ? {
        basisPoints: d.transferFee.basisPoints,
        maximum: BigInt(d.transferFee.maximum),
        permanent: d.transferFee.authority === null,
        authority: d.transferFee.authority === d.payer ? null : d.transferFee.authority,
      }
      : null,
    // The seed is already drawn: no grind again.
    vanity: null,
    mintAuthority: d.mintAuthority ?? null,
    freezeAuthority: d.freezeAuthority ?? null,
    updateAuthority: d.updateAuthority ?? null,
  };
}

/** The fee quote in force: the build's, or its last re-pricing's, and when it was made (ms). */
export interface FeeQuote {
  feeUsd: number;
  solUsd: number;
  at: number;
}

export function quoteInForce(events: StoredEvent[]): FeeQuote | null {
  let quote: FeeQuote | null = null;
  for (const e of events) {
    if (e.type === "TokenBuilt") quote = { feeUsd: e.data.feeUsd, solUsd: e.data.solUsd, at: e.at };
    if (e.type === "BuildRefreshed" && e.data.feeQuote === "repriced") {
      quote = { feeUsd: e.data.feeUsd, solUsd: e.data.solUsd, at: e.at };
    }
  }
  return quote;
}

/** Whether the quote still holds at `now` (it does for `ttlS` seconds, as an access quote does). */
export const quoteHolds = (q: FeeQuote, now: number, ttlS: number) => now < q.at + ttlS * 1000;

export interface RefreshCall {
  buildId: number;
  authenticated: Pick<KeyDoc, "secretMac">;
  refreshed: BuildRefreshed["data"];
}

export interface RefreshState {
  key: KeyDoc | null;
  build: BuildDoc | null;
}

/** Re-checked in the commit: a landing or a ban that arrived during the round trip wins. */
export function decideRefresh(cmd: RefreshCall, state: RefreshState): BuildRefreshed[] | Rejection {
  if (!stillInForce(state.key, cmd.authenticated)) {
    return reject("unauthorized", "The API key is no longer valid");
  }
  if (!state.build) return reject("not_found", "No token built by this key has that mint", {});
  const refused = refreshRefusal(state.build);
  if (refused) return refused;
  return [{ type: "BuildRefreshed", v: 1, data: cmd.refreshed }];
}
