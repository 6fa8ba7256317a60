/** The kernel's pieces on their own: each is now the one home of something that was repeated. */
import { assert, assertEquals } from "../support/assert.ts";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { ed25519 } from "@noble/curves/ed25519";
import { ApiError, ERROR_CODES, statusOf } from "../../src/kernel/errors.ts";
import { DAY_MS, isoUtc, secondsUntilUtcMidnight, utcDay } from "../../src/kernel/time.ts";
import fc from "fast-check";
import { bytesEqual, compareBytes } from "../../src/kernel/bytes.ts";
import { isAddress, parseAddress } from "../../src/kernel/base58.ts";
import { parseIp } from "../../src/kernel/ipaddr.ts";
import { sha256Hex, toHex } from "../../src/kernel/hashing.ts";
import { fixedClock } from "../../src/kernel/clock.ts";
import { verifyEd25519 } from "../../src/kernel/ed25519.ts";
import { addressBucket } from "../../src/http/client-address.ts";

Deno.test("errors: every code has its HTTP status, and ApiError carries it", () => {
  for (const code of ERROR_CODES) {
    const status = statusOf(code);
    assert(Number.isInteger(status) && status >= 400 && status < 600, `${code}: ${status}`);
    assertEquals(new ApiError(code, "x").status, status);
  }
  assertEquals(
    [statusOf("forbidden"), statusOf("daily_limit"), statusOf("idempotency_key_in_flight")],
    [403, 429, 409],
  );
  assertEquals(new Set(ERROR_CODES).size, ERROR_CODES.length);
});

Deno.test("time: the UTC day, and seconds to the next 00:00 UTC (never 0)", () => {
  const midnight = Date.UTC(2026, 10, 25);
  assertEquals(utcDay(midnight), "2026-11-25");
  assertEquals(utcDay(midnight - 1), "2026-11-24");
  assertEquals(secondsUntilUtcMidnight(midnight), 86_400);
  assertEquals(secondsUntilUtcMidnight(midnight - 1), 1);
  assertEquals(secondsUntilUtcMidnight(midnight - 1_500), 2);
  assertEquals(secondsUntilUtcMidnight(midnight + DAY_MS / 2), 43_200);
});

Deno.test("time: isoUtc writes what Date.toISOString writes, for any moment", () => {
  const same = (ms: number) => assertEquals(isoUtc(ms), new Date(ms).toISOString(), String(ms));
  // Whole milliseconds in the range it formats itself, and around its edges.
  fc.assert(fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => same(ms)));
  for (const ms of [0, 1, 999, 1000, DAY_MS - 1, DAY_MS, 951_782_400_000, 253_402_300_799_999]) {
    same(ms);
  }
  // The ones it leaves to Date: before 1970, past 9999, fractions.
  for (const ms of [-1, -DAY_MS - 1, 253_402_300_800_000, 1.5, 8.64e15]) same(ms);
});

Deno.test("bytes: equal by content and length", () => {
  assert(bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2)));
  assert(!bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 3)));
  assert(!bytesEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 0)));
});

Deno.test("bytes: ordered byte by byte, a prefix first", () => {
  // The same order as comparing the bytes as latin1 strings.
  const latin1 = (b: Uint8Array) => String.fromCharCode(...b);
  fc.assert(fc.property(fc.uint8Array(), fc.uint8Array(), (a, b) => {
    const expected = latin1(a) < latin1(b) ? -1 : latin1(a) > latin1(b) ? 1 : 0;
    assertEquals(Math.sign(compareBytes(a, b)), expected);
  }));
  assertEquals(Math.sign(compareBytes(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 0))), -1);
});

Deno.test("base58: canonical 32-byte addresses only", () => {
  const a = Keypair.generate().publicKey.toBase58();
  assertEquals(parseAddress(a)?.toBase58(), a);
  assert(isAddress(a));
  // The same bytes with a leading zero byte is another (33-byte) string: refused.
  assert(!isAddress(`1${a}`));
  assert(!isAddress(bs58.encode(new Uint8Array(31).fill(7))));
  assert(!isAddress("not-an-address"));
  assert(!isAddress(""));
});

Deno.test("ipaddr: one parser for every spelling; the rate-limit bucket reads it", () => {
  assertEquals(parseIp("0x7f.1")?.address, "127.0.0.1");
  assertEquals(parseIp("[::ffff:7f00:1]")?.address, "::ffff:7f00:1");
  assertEquals(parseIp("fe80::1%eth0")?.family, 6);
  assertEquals(parseIp("1:2:3:4:5:6:7:8:9"), null);
  // A mapped address in hex is the same IPv4 host as in dotted form.
  assertEquals(addressBucket("::ffff:cb00:7107"), "203.0.113.7");
  assertEquals(addressBucket("2001:db8:1:2::5"), "2001:db8:1:2::/64");
});

Deno.test("hashing: hex and SHA-256", async () => {
  assertEquals(toHex(new Uint8Array([0, 15, 255])), "000fff");
  assertEquals(
    await sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});

Deno.test("clock: a fixed clock stands still until moved", () => {
  const clock = fixedClock(1_000);
  assertEquals(clock(), 1_000);
  clock.advance(500);
  assertEquals(clock(), 1_500);
  clock.set(7);
  assertEquals(clock(), 7);
});

Deno.test("ed25519: a wallet's signature verifies; another message or key does not", async () => {
  const kp = Keypair.generate();
  const msg = new TextEncoder().encode("sign in");
  const sig = ed25519.sign(msg, kp.secretKey.slice(0, 32));
  const wallet = kp.publicKey.toBase58();
  assert(await verifyEd25519(wallet, msg, sig));
  assert(!(await verifyEd25519(wallet, new TextEncoder().encode("other"), sig)));
  assert(!(await verifyEd25519(Keypair.generate().publicKey.toBase58(), msg, sig)));
  assert(!(await verifyEd25519(wallet, msg, sig.subarray(0, 63))));
});
