/**
 * Bearer authentication with API keys. A malformed key or a bad checksum is refused before any
 * database read; a known key id is checked with a constant-time HMAC verify. Missing, wrong,
 * deleted, banned or suspended keys all get the same 401.
 */
import type { MiddlewareHandler } from "hono";
import { type KeyDoc, keysProjection, keyUsable } from "../../projections/keys.ts";
import { kvReads, read } from "../commands/read.ts";
import { parseKey, verifySecret } from "../keys/api-key.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";

export interface ApiKeyOptions {
  kv: Deno.Kv;
  pepper: CryptoKey;
  prefix: string;
  /** Where keys are bought: the portal's URL, named in the 401. */
  portalUrl: string;
}

/** The one 401 every keyed refusal gives, saying where a key comes from. */
export const unauthorizedMessage = (portalUrl: string) =>
  `A valid API key is required (Authorization: Bearer <key>); keys are bought at ${portalUrl}`;

export async function authenticate(
  opts: ApiKeyOptions,
  header: string | undefined,
): Promise<KeyDoc | null> {
  // The scheme name is case-insensitive and may be followed by more than one space (RFC 9110
  // 11.1, 11.4); Hono's own bearer-auth middleware takes the same view.
  const m = /^bearer +([^\s]+)$/i.exec(header ?? "");
  if (!m) return null;
  const parsed = parseKey(opts.prefix, m[1]);
  if (!parsed) return null;
  const doc = await read(kvReads(opts.kv), keysProjection, [parsed.keyId]);
  if (!keyUsable(doc)) return null;
  return (await verifySecret(opts.pepper, parsed.secret, doc.secretMac)) ? doc : null;
}

/** `apiKey()`: attached to every keyed route; puts the caller's `KeyDoc` in `c.get("key")`. */
export function apiKey(opts: ApiKeyOptions): MiddlewareHandler<AppEnv> {
  return async function apiKey(c, next) {
    const key = await authenticate(opts, c.req.header("authorization"));
    if (!key) {
      throw new ApiError("unauthorized", unauthorizedMessage(opts.portalUrl), {}, {
        "WWW-Authenticate": 'Bearer realm="api"',
      });
    }
    c.set("key", key);
    await next();
  };
}
