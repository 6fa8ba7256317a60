/**
 * The admin surface's own bearer credential (ADMIN_TOKEN), separate from API keys so no API key,
 * however privileged its owner, reaches /admin. Compared in constant time: both sides are hashed
 * first, so neither the token's length nor a matching prefix shows in the timing.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "../kernel/errors.ts";

const enc = new TextEncoder();

async function digest(s: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(s)));
}

export async function tokensEqual(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** `adminToken()`: attached to the /admin surface in src/routes/admin.ts. */
export function adminToken(token: string): MiddlewareHandler<AppEnv> {
  return async function adminToken(c, next) {
    const m = /^Bearer ([^\s]+)$/.exec(c.req.header("authorization") ?? "");
    // Always compare, even without a header, so a missing header costs the same as a wrong one.
    const ok = await tokensEqual(m?.[1] ?? "", token);
    if (!m || !ok) {
      throw new ApiError("unauthorized", "A valid admin token is required", {}, {
        "WWW-Authenticate": 'Bearer realm="admin"',
      });
    }
    await next();
  };
}
