/** Deno KV's order of keys, for walking two listings side by side (compare-stores.ts, the audit's state). */
import { encodeDouble } from "../events/kv-key-codec.ts";
import { compareBytes } from "../src/kernel/bytes.ts";

/**
 * Deno KV's key order: parts compared in turn, a key before any longer key it is a prefix of;
 * by type Uint8Array < string < bigint < number < false < true; strings by UTF-8 bytes (code
 * points), numbers as KV encodes doubles (so -0 before 0), bytes by bytes.
 */
export function compareKvKeys(a: Deno.KvKey, b: Deno.KvKey): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareKeyPart(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

const typeRank = (v: Deno.KvKeyPart): number =>
  v instanceof Uint8Array
    ? 0
    : typeof v === "string"
    ? 1
    : typeof v === "bigint"
    ? 2
    : typeof v === "number"
    ? 3
    : v
    ? 5
    : 4;

function compareKeyPart(a: Deno.KvKeyPart, b: Deno.KvKeyPart): number {
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  // Plain numbers order as they compare; only -0 and NaN need the encoded form below.
  if (typeof a === "number" && typeof b === "number" && a !== 0 && b !== 0 && a === a && b === b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return compareBytes(a as Uint8Array, b as Uint8Array);
  if (ra === 2) return (a as bigint) < (b as bigint) ? -1 : (a as bigint) > (b as bigint) ? 1 : 0;
  if (ra === 3) return compareBytes(encodeDouble(a as number), encodeDouble(b as number));
  return 0;
}

/** UTF-16 strings in code point (= UTF-8 byte) order. */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800..DFFF) encode code points above U+FFFF: they sort after U+E000..FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
      y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}
