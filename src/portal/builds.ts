/**
 * The portal's view of a key's recent builds, and the refresh of one that expired unsigned: the
 * same command as POST /v1/tokens/{mint}/refresh, reached with the wallet's session instead of
 * the API key. Only the wallet that bought the key sees its builds.
 */
import { listBuilds } from "../listing/list-builds.ts";
import { isAddress } from "../kernel/base58.ts";
import { invalid } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import type { RefreshResponse } from "../tokens/build-response.ts";
import { refreshBuild } from "../tokens/refresh-build.ts";
import { outcomeDeliveries } from "../webhooks/outcomes.ts";
import { walletKey } from "./webhooks.ts";

/** How many of a key's newest builds the page lists: the ones a slow signer is still holding. */
export const PORTAL_BUILDS = 10;

export async function portalListBuilds(s: Services, keyId: string, wallet: string) {
  const key = await walletKey(s, keyId, wallet);
  const page = await listBuilds(s.kv, key.keyId, { limit: PORTAL_BUILDS, before: null });
  return {
    items: page.items.map((b) => ({
      buildId: b.buildId,
      mint: b.mint,
      name: b.name,
      symbol: b.symbol,
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
