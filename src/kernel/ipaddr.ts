/**
 * IP address text as URL parsers and the network stack read it, parsed to bytes: every spelling
 * (inet_aton numeric forms, bracketed and zoned IPv6, embedded dotted quads). Our own code, moved
 * here from the image address policy as it was: the SSRF policy must read exactly the spellings
 * the WHATWG URL parser accepts, and its tests pin each one; a library (ipaddr.js) can replace it
 * once it is shown to pass them.
 */

export interface ParsedIp {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
  /** Canonical text (dotted quad, or RFC 5952 IPv6 without brackets). */
  address: string;
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

/**
 * The WHATWG URL IPv4 parser, which matches inet_aton: one to four parts,
 * each decimal, octal (leading 0) or hex (0x), the last part filling all the
 * remaining bytes; a single trailing dot is ignored.
 */
export function parseIpv4(text: string): Uint8Array | null {
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

/** RFC 4291 text form: hex groups, at most one "::", optional trailing dotted quad. */
export function parseIpv6(text: string): Uint8Array | null {
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
export function formatIpv6(bytes: Uint8Array): string {
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
