/**
 * JSON text written as UTF-8 bytes into one growable buffer: what the audit hashes and stores per
 * projection document, made without a string per document (v8-json.ts, kv-key-codec.ts).
 */

const encoder = new TextEncoder();

/** A growable byte buffer the transcoder writes into; `bytes()` is a view of what was written. */
export class ByteSink {
  buf = new Uint8Array(4096);
  length = 0;

  reset(): void {
    this.length = 0;
  }

  ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    if (this.length >= this.buf.length) this.ensure(1);
    this.buf[this.length++] = b;
  }

  append(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** ASCII text (numbers, punctuation). */
  ascii(s: string): void {
    this.ensure(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.length++] = s.charCodeAt(i);
  }

  /** Any text, as UTF-8. */
  text(s: string): void {
    this.ensure(s.length * 3);
    this.length += encoder.encodeInto(s, this.buf.subarray(this.length)).written;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const HEX = "0123456789abcdef";

/** JSON.stringify's escape of a control character (below U+0020). */
export function jsonControl(buf: Uint8Array, o: number, c: number): number {
  buf[o++] = 0x5c;
  const short = c === 0x08
    ? 0x62
    : c === 0x09
    ? 0x74
    : c === 0x0a
    ? 0x6e
    : c === 0x0c
    ? 0x66
    : c === 0x0d
    ? 0x72
    : 0;
  if (short) {
    buf[o++] = short;
    return o;
  }
  buf[o++] = 0x75; // u
  buf[o++] = 0x30;
  buf[o++] = 0x30;
  buf[o++] = HEX.charCodeAt(c >> 4);
  buf[o++] = HEX.charCodeAt(c & 0xf);
  return o;
}
