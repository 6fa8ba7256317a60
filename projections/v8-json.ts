/**
 * V8's serialization of a value (how Deno KV stores it) straight to the UTF-8 bytes of
 * `JSON.stringify` of that value, without building the value.
 *
 * Why our own code: the full audit reads every live projection document (1.8 million at a million
 * events), and `v8.deserialize` + `JSON.stringify` + `TextEncoder` per document was most of its
 * time. No library turns V8's wire format into JSON text; this covers the plain data projections
 * hold (objects, arrays, strings, numbers, booleans, null) and says "not mine" (false) for
 * anything else (back-references, dates, bigints, maps, boxed values, arrays with properties),
 * which the caller then decodes the slow, exact way. tests/projections/v8-json.test.ts
 * holds it byte-equal to `JSON.stringify(v8.deserialize(bytes))` on generated values.
 *
 * The format (V8's value-serializer.cc): a header (0xFF, version), then tagged values; objects
 * are 'o' (key, value)* '{' count, dense arrays 'A' length value* '$' count length, sparse ones
 * 'a' length (index, value)* '@' count length; strings '"' Latin-1, 'c' UTF-16LE (after '\0' padding for alignment); 'I' zigzag int32, 'U' uint32, 'N'
 * float64; '0' null, '_' undefined, 'T'/'F' booleans, '-' a hole in a dense array.
 */
import { type ByteSink, jsonControl } from "../src/kernel/json-bytes.ts";

const HEX = "0123456789abcdef";
const Q = 0x22;
const BS = 0x5c;

/** Thrown inside; turned into `false` by `v8ToJson`. */
class NotPlain {}
const NOT_PLAIN = new NotPlain();

/**
 * Appends `JSON.stringify(v8.deserialize(bytes))` as UTF-8 to `out`. False (with `out` left as it
 * was) when the value holds anything but plain JSON-like data, or the bytes are not V8's.
 */
export function v8ToJson(bytes: Uint8Array, out: ByteSink): boolean {
  const start = out.length;
  try {
    // Only the formats this reads as V8 does: before 13 some values were spelled differently, and
    // V8 refuses a version past its own (Deno KV writes 16), which Deno KV could then not read.
    if (bytes.length < 2 || bytes[0] !== 0xff || bytes[1] < 13 || bytes[1] > 16) return false;
    const r = new Reader(bytes, out);
    r.i = 2;
    r.skipPadding();
    if (!r.value(false)) out.ascii("null"); // JSON.stringify(undefined) has no text: not a doc
    if (r.i !== bytes.length) throw NOT_PLAIN;
    return true;
  } catch (e) {
    if (e !== NOT_PLAIN && !(e instanceof RangeError)) throw e;
    out.length = start;
    return false;
  }
}

class Reader {
  i = 0;
  /** Made for the first double: most documents have none, and this runs for millions of them. */
  #view: DataView | null = null;
  constructor(readonly b: Uint8Array, readonly out: ByteSink) {}

  skipPadding(): void {
    while (this.b[this.i] === 0x00) this.i++;
  }

  varint(): number {
    let r = 0;
    let mul = 1;
    for (;;) {
      if (this.i >= this.b.length) throw NOT_PLAIN;
      const x = this.b[this.i++];
      r += (x & 0x7f) * mul;
      if (!(x & 0x80)) return r;
      mul *= 128;
      if (mul > 2 ** 56) throw NOT_PLAIN;
    }
  }

  /** A varint that must fit 32 bits (anything longer is not what V8 writes for an int). */
  uint32(): number {
    const v = this.varint();
    if (v > 0xffffffff) throw NOT_PLAIN;
    return v;
  }

  double(): number {
    if (this.i + 8 > this.b.length) throw NOT_PLAIN;
    this.#view ??= new DataView(this.b.buffer, this.b.byteOffset, this.b.byteLength);
    const d = this.#view.getFloat64(this.i, true);
    this.i += 8;
    return d;
  }

  number(n: number): void {
    // JSON.stringify: NaN and the infinities are null; -0 is "0" (so is String(-0)).
    this.out.ascii(Number.isFinite(n) ? String(n) : "null");
  }

  /**
   * Writes one value; false (writing nothing) for undefined, which JSON.stringify leaves out of
   * objects and writes as null in arrays. `inDenseArray`: a hole is allowed here.
   */
  value(inDenseArray: boolean): boolean {
    this.skipPadding();
    const tag = this.b[this.i++];
    switch (tag) {
      case 0x30: // '0' null
        this.out.ascii("null");
        return true;
      case 0x5f: // '_' undefined
        return false;
      case 0x2d: // '-' the hole: only ever in a dense array (V8 refuses it anywhere else)
        if (!inDenseArray) throw NOT_PLAIN;
        return false;
      case 0x54: // 'T'
        this.out.ascii("true");
        return true;
      case 0x46: // 'F'
        this.out.ascii("false");
        return true;
      case 0x49: { // 'I' zigzag int32
        const z = this.uint32();
        this.out.ascii(String((z >>> 1) ^ -(z & 1)));
        return true;
      }
      case 0x55: // 'U' uint32
        this.out.ascii(String(this.uint32()));
        return true;
      case 0x4e: // 'N' double
        this.number(this.double());
        return true;
      case 0x22: // '"' Latin-1
        this.latin1(this.varint());
        return true;
      case 0x63: // 'c' UTF-16LE
        this.utf16(this.varint());
        return true;
      case 0x6f: // 'o' object
        this.object();
        return true;
      case 0x41: // 'A' dense array
        this.array();
        return true;
      case 0x61: // 'a' sparse array (holes, or undefined elements)
        this.sparseArray();
        return true;
      default:
        throw NOT_PLAIN;
    }
  }

  object(): void {
    const out = this.out;
    out.byte(0x7b); // {
    let first = true;
    let count = 0;
    /** Where each key's text was written, to refuse a repeated key as V8 does. */
    const keys: number[] = [];
    /** The keys of undefined properties, whose text was taken back out of `out`. */
    let dropped: Uint8Array[] | null = null;
    for (;;) {
      this.skipPadding();
      if (this.b[this.i] === 0x7b) { // '{' end of object
        this.i++;
        if (this.varint() !== count) throw NOT_PLAIN;
        break;
      }
      const mark = out.length;
      if (!first) out.byte(0x2c); // ,
      const keyAt = out.length;
      this.key();
      const keyEnd = out.length;
      if (
        repeats(out.buf, keys, keyAt, keyEnd) || repeatsDropped(out.buf, dropped, keyAt, keyEnd)
      ) {
        throw NOT_PLAIN;
      }
      out.byte(0x3a); // :
      if (this.value(false)) {
        first = false;
        keys.push(keyAt, keyEnd);
      } else {
        // An undefined property: JSON.stringify leaves it out (its key still counts as taken).
        (dropped ??= []).push(out.buf.slice(keyAt, keyEnd));
        out.length = mark;
      }
      count++;
    }
    out.byte(0x7d); // }
  }

  /** A property key: a string, or an array index stored as a number. Written as a JSON string. */
  key(): void {
    const tag = this.b[this.i++];
    switch (tag) {
      case 0x22:
        this.latin1(this.varint());
        return;
      case 0x63:
        this.utf16(this.varint());
        return;
      case 0x49: {
        const z = this.uint32();
        this.out.ascii(`"${(z >>> 1) ^ -(z & 1)}"`);
        return;
      }
      case 0x55:
        this.out.ascii(`"${this.uint32()}"`);
        return;
      case 0x4e:
        this.out.ascii(`"${String(this.double())}"`);
        return;
      default:
        throw NOT_PLAIN;
    }
  }

  array(): void {
    const length = this.varint();
    const out = this.out;
    out.byte(0x5b); // [
    for (let k = 0; k < length; k++) {
      if (k) out.byte(0x2c);
      if (!this.value(true)) out.ascii("null");
    }
    this.skipPadding();
    // Properties other than the elements would follow here: JSON.stringify ignores them, and
    // skipping them would mean decoding them; not plain data.
    if (this.b[this.i++] !== 0x24) throw NOT_PLAIN; // '$'
    if (this.varint() !== 0 || this.varint() !== length) throw NOT_PLAIN;
    out.byte(0x5d); // ]
  }

  /**
   * Index-value pairs in ascending order, then '@' count length: the missing indices are holes,
   * written as null; a property that is not an index is declined.
   */
  sparseArray(): void {
    const length = this.varint();
    const out = this.out;
    out.byte(0x5b); // [
    let next = 0;
    let count = 0;
    for (;;) {
      this.skipPadding();
      if (this.b[this.i] === 0x40) { // '@'
        this.i++;
        break;
      }
      const tag = this.b[this.i++];
      if (tag !== 0x49 && tag !== 0x55) throw NOT_PLAIN;
      const raw = this.uint32();
      const index = tag === 0x49 ? (raw >>> 1) ^ -(raw & 1) : raw;
      if (index < next || index >= length) throw NOT_PLAIN;
      for (; next < index; next++) out.ascii(next ? ",null" : "null");
      if (next) out.byte(0x2c);
      if (!this.value(false)) out.ascii("null");
      next++;
      count++;
    }
    if (this.varint() !== count || this.varint() !== length) throw NOT_PLAIN;
    for (; next < length; next++) out.ascii(next ? ",null" : "null");
    out.byte(0x5d); // ]
  }

  latin1(n: number): void {
    const b = this.b;
    const end = this.i + n;
    if (end > b.length) throw NOT_PLAIN;
    const out = this.out;
    out.ensure(n * 6 + 2);
    const buf = out.buf;
    let o = out.length;
    buf[o++] = Q;
    for (let i = this.i; i < end; i++) {
      const c = b[i];
      if (c >= 0x20 && c < 0x80) {
        if (c === Q || c === BS) buf[o++] = BS;
        buf[o++] = c;
      } else if (c >= 0x80) {
        buf[o++] = 0xc0 | (c >> 6);
        buf[o++] = 0x80 | (c & 0x3f);
      } else o = jsonControl(buf, o, c);
    }
    buf[o++] = Q;
    out.length = o;
    this.i = end;
  }

  utf16(n: number): void {
    const b = this.b;
    const end = this.i + n;
    if (n % 2 !== 0 || end > b.length) throw NOT_PLAIN;
    const out = this.out;
    out.ensure((n / 2) * 6 + 2);
    const buf = out.buf;
    let o = out.length;
    buf[o++] = Q;
    for (let i = this.i; i < end; i += 2) {
      const u = b[i] | (b[i + 1] << 8);
      if (u >= 0x20 && u < 0x80) {
        if (u === Q || u === BS) buf[o++] = BS;
        buf[o++] = u;
      } else if (u < 0x20) o = jsonControl(buf, o, u);
      else if (u < 0x800) {
        buf[o++] = 0xc0 | (u >> 6);
        buf[o++] = 0x80 | (u & 0x3f);
      } else if (u >= 0xd800 && u <= 0xdfff) {
        const lo = i + 3 < end ? b[i + 2] | (b[i + 3] << 8) : 0;
        if (u <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff) {
          const cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
          buf[o++] = 0xf0 | (cp >> 18);
          buf[o++] = 0x80 | ((cp >> 12) & 0x3f);
          buf[o++] = 0x80 | ((cp >> 6) & 0x3f);
          buf[o++] = 0x80 | (cp & 0x3f);
          i += 2;
        } else {
          // A lone surrogate: JSON.stringify writes it as an escape (well-formed JSON.stringify).
          buf[o++] = BS;
          buf[o++] = 0x75; // u
          for (let s = 12; s >= 0; s -= 4) buf[o++] = HEX.charCodeAt((u >> s) & 0xf);
        }
      } else {
        buf[o++] = 0xe0 | (u >> 12);
        buf[o++] = 0x80 | ((u >> 6) & 0x3f);
        buf[o++] = 0x80 | (u & 0x3f);
      }
    }
    buf[o++] = Q;
    out.length = o;
    this.i = end;
  }
}

/** Whether the key text at [from, to) of `buf` equals one of `keys` (start, end pairs) before it. */
function repeats(buf: Uint8Array, keys: number[], from: number, to: number): boolean {
  const n = to - from;
  for (let k = 0; k < keys.length; k += 2) {
    if (keys[k + 1] - keys[k] !== n) continue;
    let same = true;
    for (let j = 0; j < n; j++) {
      if (buf[keys[k] + j] !== buf[from + j]) {
        same = false;
        break;
      }
    }
    if (same) return true;
  }
  return false;
}

/** `repeats` for the keys of properties left out (undefined), kept as copies. */
function repeatsDropped(
  buf: Uint8Array,
  dropped: Uint8Array[] | null,
  from: number,
  to: number,
): boolean {
  if (!dropped) return false;
  for (const d of dropped) {
    if (d.length !== to - from) continue;
    if (d.every((b, j) => b === buf[from + j])) return true;
  }
  return false;
}

/** Whether the four bytes at `at` are the text `null` (a value written as no document). */
export const isNullText = (b: Uint8Array, at: number): boolean =>
  b[at] === 0x6e && b[at + 1] === 0x75 && b[at + 2] === 0x6c && b[at + 3] === 0x6c;
