/**
 * Decides which IP addresses the server may fetch images from.
 *
 * The goal is to stop server-side request forgery: a client-supplied URL must
 * never make us talk to loopback, the cloud metadata service, private networks
 * or any other address that is not an ordinary host on the public internet.
 * IPv6 is allow-listed (only global unicast 2000::/3 minus special ranges), so
 * an address block we did not think of is refused rather than allowed.
 */
import { parseIp, parseIpv4, parseIpv6 } from "../../kernel/ipaddr.ts";

export type AddressVerdict =
  | { public: true; address: string }
  | { public: false; address: string | null; reason: string };

/** True only for addresses that are safe to connect to on a client's behalf. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip).public;
}

/**
 * Classifies an IP address string. Accepts every spelling a URL parser or
 * `inet_aton` would (e.g. `2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`,
 * `[::1]`, `::ffff:7f00:1`), so a disguised address gets the same verdict as
 * its plain form. Anything that is not an IP address is not public.
 */
export function classifyAddress(ip: string): AddressVerdict {
  const parsed = parseIp(ip);
  if (!parsed) return { public: false, address: null, reason: "not an IP address" };
  const reason = parsed.family === 4 ? ipv4Reason(parsed.bytes) : ipv6Reason(parsed.bytes);
  return reason === null
    ? { public: true, address: parsed.address }
    : { public: false, address: parsed.address, reason };
}

/**
 * Loopback only (127.0.0.0/8 and ::1), deliberately excluding embedded forms
 * such as ::ffff:127.0.0.1: it gates a test-only mode and should stay narrow.
 */
export function isLoopbackAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  if (!parsed) return false;
  if (parsed.family === 4) return parsed.bytes[0] === 127;
  return parsed.bytes.every((b, i) => b === (i === 15 ? 1 : 0));
}

// ---------------------------------------------------------------------------
// IPv4

interface Range4 {
  base: number;
  prefix: number;
  reason: string;
}

function range4(cidr: string, what: string): Range4 {
  const [base, prefix] = cidr.split("/");
  const bytes = parseIpv4(base)!;
  return { base: toU32(bytes), prefix: Number(prefix), reason: `${what} ${cidr}` };
}

// Broadcast is listed before 240/4 so it gets its own reason.
const IPV4_BLOCKED: Range4[] = [
  range4("255.255.255.255/32", "broadcast"),
  range4("0.0.0.0/8", "'this network'"),
  range4("10.0.0.0/8", "private network"),
  range4("100.64.0.0/10", "carrier-grade NAT"),
  range4("127.0.0.0/8", "loopback"),
  range4("169.254.0.0/16", "link-local (cloud metadata)"),
  range4("172.16.0.0/12", "private network"),
  range4("192.0.0.0/24", "IETF protocol assignments"),
  range4("192.0.2.0/24", "documentation"),
  range4("192.88.99.0/24", "6to4 relay anycast"),
  range4("192.168.0.0/16", "private network"),
  range4("198.18.0.0/15", "benchmarking"),
  range4("198.51.100.0/24", "documentation"),
  range4("203.0.113.0/24", "documentation"),
  range4("224.0.0.0/4", "multicast"),
  range4("240.0.0.0/4", "reserved"),
];

function ipv4Reason(bytes: Uint8Array): string | null {
  const value = toU32(bytes);
  for (const r of IPV4_BLOCKED) {
    const mask = r.prefix === 0 ? 0 : (0xffffffff << (32 - r.prefix)) >>> 0;
    if (((value & mask) >>> 0) === r.base) return r.reason;
  }
  return null;
}

function toU32(b: Uint8Array): number {
  return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
}

// ---------------------------------------------------------------------------
// IPv6

interface Range6 {
  base: Uint8Array;
  prefix: number;
  reason: string;
  /** Offset of an IPv4 address embedded in this range, classified in its place. */
  embedsV4At?: number;
}

function range6(cidr: string, what: string, embedsV4At?: number): Range6 {
  const [base, prefix] = cidr.split("/");
  return { base: parseIpv6(base)!, prefix: Number(prefix), reason: `${what} ${cidr}`, embedsV4At };
}

// First match wins, so exact addresses come before the blocks containing them.
const IPV6_RANGES: Range6[] = [
  range6("::/128", "unspecified address"),
  range6("::1/128", "loopback"),
  range6("::ffff:0:0/96", "IPv4-mapped", 12),
  range6("::/96", "IPv4-compatible", 12),
  range6("64:ff9b::/96", "NAT64", 12),
  range6("64:ff9b:1::/48", "local-use NAT64"),
  range6("100::/64", "discard-only"),
  range6("2001::/32", "Teredo"),
  range6("2001:db8::/32", "documentation"),
  range6("2001::/23", "IETF protocol assignments"),
  range6("2002::/16", "6to4", 2),
  range6("3fff::/20", "documentation"),
  range6("fc00::/7", "unique local"),
  range6("fe80::/10", "link-local"),
  range6("fec0::/10", "site-local"),
  range6("ff00::/8", "multicast"),
];

const GLOBAL_UNICAST = range6("2000::/3", "global unicast");

function ipv6Reason(bytes: Uint8Array): string | null {
  for (const r of IPV6_RANGES) {
    if (!inRange6(bytes, r)) continue;
    if (r.embedsV4At === undefined) return r.reason;
    // Translation and tunnelling prefixes reach whatever IPv4 address they
    // carry, so that address decides.
    const v4 = bytes.subarray(r.embedsV4At, r.embedsV4At + 4);
    const inner = ipv4Reason(v4);
    return inner === null ? null : `${r.reason} form of ${v4.join(".")}, ${inner}`;
  }
  return inRange6(bytes, GLOBAL_UNICAST) ? null : "not global unicast (outside 2000::/3)";
}

function inRange6(bytes: Uint8Array, r: Range6): boolean {
  const whole = r.prefix >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== r.base[i]) return false;
  const bits = r.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (bytes[whole] & mask) === (r.base[whole] & mask);
}
