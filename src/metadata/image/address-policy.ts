/**
 * Decides which IP addresses the server may fetch images from.
 *
 * The goal is to stop server-side request forgery: a client-supplied URL must
 * never make us talk to loopback, the cloud metadata service, private networks
 * or any other address that is not an ordinary host on the public internet.
 * IPv6 is allow-listed (only global unicast 2000::/3 minus special ranges), so
 * an address block we did not think of is refused rather than allowed.
 */

export interface ParsedIp {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
  /** Canonical text (dotted quad, or RFC 5952 IPv6 without brackets). */
  address: string;
}

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

/** Parses IPv4 (all WHATWG/inet_aton numeric forms) or IPv6 (optionally bracketed). */
export function parseIp(input: string): ParsedIp | null {
  if (typeof input !== "string" || input.length === 0 || input.length > 100) return null;
  let text = input;
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  if (text.includes(":")) {
    // A zone index (fe80::1%eth0) only scopes the address; the verdict depends
    // on the address itself.
    const zone = text.indexOf("%");
    if (zone >= 0 && !/^[0-9A-Za-z_.-]+$/.test(text.slice(zone + 1))) return null;
    const bytes = parseIpv6(zone >= 0 ? text.slice(0, zone) : text);
    return bytes ? { family: 6, bytes, address: formatIpv6(bytes) } : null;
  }
  if (text !== input) return null;
  const bytes = parseIpv4(text);
  return bytes ? { family: 4, bytes, address: bytes.join(".") } : null;
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

/**
 * The WHATWG URL IPv4 parser, which matches inet_aton: one to four parts,
 * each decimal, octal (leading 0) or hex (0x), the last part filling all the
 * remaining bytes; a single trailing dot is ignored.
 */
function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIpv4Number(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - numbers.length)) return null;
  let value = last;
  numbers.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return new Uint8Array([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
}

function parseIpv4Number(part: string): number | null {
  if (part === "") return null;
  let digits = part;
  let radix = 10;
  if (/^0[xX]/.test(part)) {
    digits = part.slice(2);
    radix = 16;
  } else if (part.length > 1 && part[0] === "0") {
    digits = part.slice(1);
    radix = 8;
  }
  if (digits === "") return 0;
  const valid = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return null;
  // Values past 2^32 are refused by the caller; precision loss above 2^53
  // cannot bring such a value back into range.
  return parseInt(digits, radix);
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

/** RFC 4291 text form: hex groups, at most one "::", optional trailing dotted quad. */
function parseIpv6(text: string): Uint8Array | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] === "" ? [] : halves[0].split(":");
  const tail = halves.length === 2 && halves[1] !== "" ? halves[1].split(":") : [];
  const groups: number[] = [];
  const parseSide = (side: string[], isLast: boolean): number[] | null => {
    const out: number[] = [];
    for (let i = 0; i < side.length; i++) {
      const g = side[i];
      if (isLast && i === side.length - 1 && g.includes(".")) {
        const v4 = parseDottedQuad(g);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) {
        out.push(parseInt(g, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const headGroups = parseSide(head, halves.length === 1);
  const tailGroups = parseSide(tail, true);
  if (!headGroups || !tailGroups) return null;
  if (halves.length === 1) {
    if (headGroups.length !== 8) return null;
    groups.push(...headGroups);
  } else {
    const missing = 8 - headGroups.length - tailGroups.length;
    if (missing < 1) return null;
    groups.push(...headGroups, ...new Array(missing).fill(0), ...tailGroups);
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 255;
  });
  return bytes;
}

/** Strict dotted decimal, as allowed inside IPv6 text (no octal or hex tricks). */
function parseDottedQuad(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/** RFC 5952: lowercase, no leading zeros, longest run of two or more zero groups as "::". */
function formatIpv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}
