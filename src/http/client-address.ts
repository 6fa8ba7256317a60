/** Who a request came from, as the per-address limits count it. */
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { parseIp } from "../kernel/ipaddr.ts";

/**
 * The caller's network address as the server saw it (Deno.serve's `remoteAddr`; on Deno Deploy,
 * the client's). In-process requests (tests) have none and share one bucket.
 */
export function clientAddress(c: Context<AppEnv>): string {
  const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  const host = info?.remoteAddr?.hostname;
  return host ? addressBucket(host) : "local";
}

/**
 * One count per IPv4 address, per IPv6 /64 (one subscriber's network: counting single IPv6
 * addresses would give each caller 2^64 counts).
 */
export function addressBucket(host: string): string {
  const h = host.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!h.includes(":")) return h;
  const ip = parseIp(h);
  if (!ip || ip.family === 4) return h;
  const b = ip.bytes;
  // An IPv4-mapped address (::ffff:1.2.3.4) is that IPv4 address.
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) {
    return b.subarray(12).join(".");
  }
  const groups = [0, 2, 4, 6].map((i) => ((b[i] << 8) | b[i + 1]).toString(16));
  return `${groups.join(":")}::/64`;
}
