/**
 * The portal's view of a key's webhook endpoints: the same commands as /v1/webhooks, reached with
 * the wallet's session instead of the API key. Only the wallet that bought the key sees it.
 */
import { type KeyDoc, keysProjection, keyUsable } from "../../projections/keys.ts";
import { kvReads, read } from "../commands/read.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import {
  deleteEndpoint,
  listEndpoints,
  registerEndpoint,
  type RegisterRequest,
} from "../webhooks/endpoints.ts";
import type { z } from "zod";

/** The key `keyId` if `wallet` bought it and it can be used; else 404, as for an unknown key. */
export async function walletKey(s: Services, keyId: string, wallet: string): Promise<KeyDoc> {
  const key = await read(kvReads(s.kv), keysProjection, [keyId]);
  // Another wallet's key reads as unknown; a key that can't be used has no webhooks to manage.
  if (!key || key.wallet !== wallet || !keyUsable(key)) {
    throw new ApiError("not_found", "key not found");
  }
  return key;
}

export async function portalListWebhooks(s: Services, keyId: string, wallet: string) {
  return { items: await listEndpoints(s, await walletKey(s, keyId, wallet)) };
}

export async function portalRegisterWebhook(
  s: Services,
  keyId: string,
  wallet: string,
  body: z.infer<typeof RegisterRequest>,
) {
  return await registerEndpoint(s, await walletKey(s, keyId, wallet), body);
}

export async function portalDeleteWebhook(s: Services, keyId: string, wallet: string, id: string) {
  await deleteEndpoint(s, await walletKey(s, keyId, wallet), id);
  return { deleted: id };
}
