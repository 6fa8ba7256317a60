/**
 * The portal's view of a key's recent builds (each token as it is now: its last landed update's
 * name, symbol and uri, else the created ones), the refresh of one that expired unsigned, and the
 * update of a confirmed one: the same commands as POST /v1/tokens/{mint}/refresh,
 * POST /v1/tokens/{mint}/update, POST /v1/transactions and GET /v1/tokens/{mint}/updates/{id},
 * reached with the wallet's session instead of the API key. Only the wallet that bought the key
 * sees its builds, and an update the page builds names that wallet as the authority.
 */
import { buildsProjection } from "../../projections/builds.ts";
import { tokenCurrentProjection } from "../../projections/updates.ts";
import { currentWellKnownMatcher } from "../admin/well-known-names.ts";
import { kvReads, readMany } from "../commands/read.ts";
import { relayTransaction } from "../creation/relay.ts";
import { verifyUpdate } from "../creation/update-verify.ts";
import { listBuilds } from "../listing/list-builds.ts";
import { isAddress } from "../kernel/base58.ts";
import { invalid } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import type { RefreshResponse } from "../tokens/build-response.ts";
import type { UpdateBuiltResponse } from "../tokens/update-response.ts";
import { refreshBuild } from "../tokens/refresh-build.ts";
import { buildUpdate } from "../tokens/update-build.ts";
import { parseUpdateRequest } from "../tokens/update-request.ts";
import { outcomeDeliveries } from "../webhooks/outcomes.ts";
import { walletKey } from "./webhooks.ts";

/** How many of a key's newest builds the page lists: the ones a slow signer is still holding. */
export const PORTAL_BUILDS = 10;

export async function portalListBuilds(s: Services, keyId: string, wallet: string) {
  const key = await walletKey(s, keyId, wallet);
  const page = await listBuilds(s.kv, key.keyId, { limit: PORTAL_BUILDS, before: null });
  // What each token is after its landed updates (none: as created, the uri from its record,
  // which the listing doesn't serve): a getMany of ten each.
  const reads = kvReads(s.kv);
  const [current, docs] = await Promise.all([
    readMany(reads, page.items.map((b) => [tokenCurrentProjection, [b.buildId]] as const)),
    readMany(reads, page.items.map((b) => [buildsProjection, [b.buildId]] as const)),
  ]);
  return {
    items: page.items.map((b, i) => ({
      buildId: b.buildId,
      mint: b.mint,
      name: current[i]?.name ?? b.name,
      symbol: current[i]?.symbol ?? b.symbol,
      uri: current[i]?.uri ?? docs[i]?.uri ?? null,
      updates: current[i]?.updates ?? 0,
      status: b.status,
      signature: b.signature,
      createdAt: b.createdAt,
    })),
  };
}

export async function portalRefreshBuild(
  s: Services,
  keyId: string,
  wallet: string,
  mint: string,
): Promise<RefreshResponse> {
  if (!isAddress(mint)) throw invalid({ mint: "must be a base58 Solana address (32 bytes)" });
  const key = await walletKey(s, keyId, wallet);
  // As through /v1: the refresh's token.refreshed deliveries go out in its commit.
  return await refreshBuild(s, key, mint, (tx, b, events) => outcomeDeliveries(s, tx, b, events));
}

/**
 * Builds an update of a confirmed build for the signed-in wallet: the /v1 update command with
 * `authority` set to that wallet (the body can't name another), so only it can sign what comes back.
 */
export async function portalUpdateBuild(
  s: Services,
  keyId: string,
  wallet: string,
  mint: string,
  body: unknown,
): Promise<UpdateBuiltResponse> {
  if (!isAddress(mint)) throw invalid({ mint: "must be a base58 Solana address (32 bytes)" });
  const key = await walletKey(s, keyId, wallet);
  const raw = typeof body === "object" && body !== null && !Array.isArray(body)
    ? { ...body, authority: wallet }
    : body;
  const { publicBaseUrl, hostedBaseUrl } = s.config;
  const wellKnown = await currentWellKnownMatcher(s);
  const req = parseUpdateRequest(raw, wellKnown, hostedBaseUrl ?? publicBaseUrl);
  return await buildUpdate(s, key, mint, req);
}

/** The relay (POST /v1/transactions) for a transaction the wallet signed on the page. */
export async function portalRelay(s: Services, keyId: string, wallet: string, transaction: string) {
  return await relayTransaction(s, await walletKey(s, keyId, wallet), transaction, null);
}

/** An update's record, as GET /v1/tokens/{mint}/updates/{updateId} without `?signature=`. */
export async function portalUpdateRecord(
  s: Services,
  keyId: string,
  wallet: string,
  mint: string,
  updateId: string,
) {
  const fields: Record<string, string> = {};
  if (!isAddress(mint)) fields.mint = "must be a base58 Solana address (32 bytes)";
  if (!/^[0-9a-f]{32}$/.test(updateId)) fields.updateId = "must be 32 lower-case hex characters";
  if (Object.keys(fields).length) throw invalid(fields);
  return await verifyUpdate(s, await walletKey(s, keyId, wallet), mint, updateId, null);
}
