import assert from "node:assert/strict";
import {
  classifyAddress,
  isLoopbackAddress,
  isPublicAddress,
} from "../../../src/metadata/image/address-policy.ts";
import { parseIp } from "../../../src/kernel/ipaddr.ts";

/** Every refused class, as [address, a fragment of the expected reason]. */
const REFUSED: [string, string][] = [
  ["127.0.0.1", "loopback 127.0.0.0/8"],
  ["127.255.255.254", "loopback"],
  ["0.0.0.0", "'this network' 0.0.0.0/8"],
  ["0.1.2.3", "0.0.0.0/8"],
  ["10.0.0.5", "private network 10.0.0.0/8"],
  ["10.255.255.255", "10.0.0.0/8"],
  ["172.16.0.1", "private network 172.16.0.0/12"],
  ["172.31.255.255", "172.16.0.0/12"],
  ["192.168.1.1", "private network 192.168.0.0/16"],
  ["169.254.169.254", "link-local (cloud metadata) 169.254.0.0/16"],
  ["169.254.0.1", "169.254.0.0/16"],
  ["100.64.0.1", "carrier-grade NAT 100.64.0.0/10"],
  ["100.127.255.255", "100.64.0.0/10"],
  ["192.0.0.8", "IETF protocol assignments 192.0.0.0/24"],
  ["192.0.2.1", "documentation 192.0.2.0/24"],
  ["198.18.0.1", "benchmarking 198.18.0.0/15"],
  ["198.19.255.255", "198.18.0.0/15"],
  ["198.51.100.7", "documentation 198.51.100.0/24"],
  ["203.0.113.9", "documentation 203.0.113.0/24"],
  ["224.0.0.1", "multicast 224.0.0.0/4"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved 240.0.0.0/4"],
  ["255.255.255.254", "reserved 240.0.0.0/4"],
  ["255.255.255.255", "broadcast 255.255.255.255/32"],
  ["::", "unspecified address ::/128"],
  ["::1", "loopback ::1/128"],
  ["fc00::1", "unique local fc00::/7"],
  ["fd12:3456:789a::1", "unique local fc00::/7"],
  ["fe80::1", "link-local fe80::/10"],
  ["febf:ffff::1", "link-local fe80::/10"],
  ["fec0::1", "site-local fec0::/10"],
  ["ff02::1", "multicast ff00::/8"],
  ["ff0e::1", "multicast"],
  ["2001:db8::1", "documentation 2001:db8::/32"],
  ["2001:db8:ffff::1", "documentation 2001:db8::/32"],
  ["3fff::1", "documentation 3fff::/20"],
  ["2001::1", "Teredo 2001::/32"],
  ["2001:2::1", "IETF protocol assignments 2001::/23"],
  ["100::1", "discard-only 100::/64"],
  ["64:ff9b:1::a00:1", "local-use NAT64 64:ff9b:1::/48"],
  // IPv4 inside IPv6: mapped (dotted and hex), compatible, NAT64 and 6to4.
  ["::ffff:127.0.0.1", "IPv4-mapped ::ffff:0:0/96 form of 127.0.0.1, loopback"],
  ["::ffff:7f00:1", "IPv4-mapped ::ffff:0:0/96 form of 127.0.0.1"],
  ["::ffff:a9fe:a9fe", "form of 169.254.169.254"],
  ["::ffff:10.0.0.5", "form of 10.0.0.5, private network"],
  ["0:0:0:0:0:ffff:c0a8:0101", "form of 192.168.1.1"],
  ["::127.0.0.1", "IPv4-compatible ::/96 form of 127.0.0.1"],
  ["::a00:5", "IPv4-compatible ::/96 form of 10.0.0.5"],
  ["64:ff9b::10.0.0.5", "NAT64 64:ff9b::/96 form of 10.0.0.5"],
  ["64:ff9b::a9fe:a9fe", "NAT64 64:ff9b::/96 form of 169.254.169.254"],
  ["2002:7f00:1::", "6to4 2002::/16 form of 127.0.0.1"],
  ["2002:c0a8:101::1", "6to4 2002::/16 form of 192.168.1.1"],
  // Outside global unicast 2000::/3 entirely.
  ["4000::1", "not global unicast"],
  ["5f00::1", "not global unicast"],
  ["::ffff:0:a00:1", "not global unicast"],
];

/** Numeric spellings that URL parsers and inet_aton accept, with what they mean. */
const NUMERIC_TRICKS: [string, string][] = [
  ["2130706433", "127.0.0.1"],
  ["0177.0.0.1", "127.0.0.1"],
  ["0x7f.1", "127.0.0.1"],
  ["0x7F.0.0.1", "127.0.0.1"],
  ["127.1", "127.0.0.1"],
  ["127.0.1", "127.0.0.1"],
  ["0x7f000001", "127.0.0.1"],
  ["017700000001", "127.0.0.1"],
  ["127.0.0.1.", "127.0.0.1"],
  ["0", "0.0.0.0"],
  ["0x", "0.0.0.0"],
  ["10.1", "10.0.0.1"],
  ["167772161", "10.0.0.1"],
  ["0xa9.0xfe.0xa9.0xfe", "169.254.169.254"],
  ["0251.0376.0251.0376", "169.254.169.254"],
  ["2852039166", "169.254.169.254"],
  ["169.16689662", "169.254.169.254"],
  ["0xc0.0xa8.257", "192.168.1.1"],
  ["4294967295", "255.255.255.255"],
];

const PUBLIC: string[] = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "172.15.255.255",
  "172.32.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "169.253.255.255",
  "169.255.0.0",
  "192.0.1.1",
  "192.0.3.1",
  "192.167.255.255",
  "192.169.0.0",
  "198.17.255.255",
  "198.20.0.0",
  "223.255.255.255",
  "9.255.255.255",
  "11.0.0.0",
  "126.255.255.255",
  "128.0.0.0",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2a00:1450:4001:80e::200e",
  "2001:200::1",
  "::ffff:8.8.8.8",
  "64:ff9b::8.8.8.8",
  "2002:808:808::1",
  "134744072", // 8.8.8.8 as one number
];

const NOT_IPS = [
  "",
  "localhost",
  "example.com",
  "1.2.3.4.5",
  "256.1.1.1",
  "1.2.3.256",
  "4294967296",
  "0x1g.1",
  "08.1.1.1",
  "1..2",
  ".1.2.3",
  " 8.8.8.8",
  "8.8.8.8 ",
  "[8.8.8.8]",
  ":::1",
  "1::2::3",
  "12345::1",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7:8::",
  "::ffff:1.2.3",
  "::ffff:01.2.3.4",
  "::1.2.3.4:5",
  "fe80::1%",
  "[::1",
];

Deno.test("address policy: every refused class is refused with its reason", () => {
  for (const [ip, reason] of REFUSED) {
    const verdict = classifyAddress(ip);
    assert.equal(verdict.public, false, ip);
    assert.equal(isPublicAddress(ip), false, ip);
    assert.ok(
      !verdict.public && verdict.reason.includes(reason),
      `${ip}: ${JSON.stringify(verdict)}`,
    );
  }
});

Deno.test("address policy: ordinary public addresses and range edges are public", () => {
  for (const ip of PUBLIC) {
    assert.deepEqual(classifyAddress(ip).public, true, ip);
    assert.equal(isPublicAddress(ip), true, ip);
  }
});

Deno.test("address policy: numeric spellings are decoded like URL parsers and inet_aton do", () => {
  for (const [trick, plain] of NUMERIC_TRICKS) {
    const verdict = classifyAddress(trick);
    assert.equal(verdict.address, plain, trick);
    assert.equal(verdict.public, false, trick);
    assert.equal(isPublicAddress(trick), false, trick);
  }
});

Deno.test("address policy: the same tricks inside URLs are normalised by WHATWG URL and refused", () => {
  for (const [trick, plain] of NUMERIC_TRICKS) {
    const host = new URL(`https://${trick}/x.png`).hostname;
    assert.equal(host, plain, `URL normalises ${trick}`);
    assert.equal(isPublicAddress(host), false, trick);
  }
  const v6: [string, string][] = [
    ["[::1]", "[::1]"],
    ["[0:0:0:0:0:0:0:1]", "[::1]"],
    ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"],
    ["[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]"],
    ["[64:ff9b::10.0.0.5]", "[64:ff9b::a00:5]"],
    ["[FE80::1]", "[fe80::1]"],
    ["[::]", "[::]"],
  ];
  for (const [literal, normalised] of v6) {
    const host = new URL(`https://${literal}:8443/`).hostname;
    assert.equal(host, normalised, literal);
    assert.equal(isPublicAddress(host), false, literal);
  }
  assert.equal(isPublicAddress(new URL("https://134744072/").hostname), true);
  // Hosts that only look numeric are names, so URL keeps them and the policy
  // says "not an IP" (the fetcher then resolves and checks them).
  assert.equal(new URL("https://0x7f.example/").hostname, "0x7f.example");
  assert.equal(isPublicAddress("0x7f.example"), false);
  // Hosts ending in a number must be valid IPv4, or URL itself rejects them.
  assert.throws(() => new URL("https://0x7g.1/"));
  assert.throws(() => new URL("https://1.2.3.256/"));
  assert.throws(() => new URL("https://127.0.0.1.2.3/"));
});

Deno.test("address policy: anything that is not an IP address is not public", () => {
  for (const text of NOT_IPS) {
    const verdict = classifyAddress(text);
    assert.deepEqual(verdict, { public: false, address: null, reason: "not an IP address" }, text);
    assert.equal(parseIp(text), null, text);
  }
  assert.equal(isPublicAddress(undefined as unknown as string), false);
});

Deno.test("address policy: canonical forms are what a connection would use", () => {
  assert.equal(parseIp("[2001:DB8:0:0:1:0:0:1]")?.address, "2001:db8::1:0:0:1");
  assert.equal(parseIp("2606:4700:4700:0:0:0:0:1111")?.address, "2606:4700:4700::1111");
  assert.equal(parseIp("1:0:0:2:0:0:0:3")?.address, "1:0:0:2::3");
  assert.equal(parseIp("1:2:3:4:5:6:7:0")?.address, "1:2:3:4:5:6:7:0");
  assert.equal(parseIp("::ffff:1.2.3.4")?.address, "::ffff:102:304");
  assert.equal(parseIp("fe80::1%eth0")?.address, "fe80::1");
  assert.equal(isPublicAddress("fe80::1%eth0"), false);
  assert.equal(parseIp("0x08.0x08.0x08.0x08")?.address, "8.8.8.8");
  assert.deepEqual(parseIp("8.8.4.4")?.bytes, new Uint8Array([8, 8, 4, 4]));
});

Deno.test("address policy: loopback check used by the test-only mode is narrow", () => {
  for (const ip of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "2130706433"]) {
    assert.equal(isLoopbackAddress(ip), true, ip);
  }
  for (const ip of ["::ffff:127.0.0.1", "::127.0.0.1", "0.0.0.0", "::", "10.0.0.1", "localhost"]) {
    assert.equal(isLoopbackAddress(ip), false, ip);
  }
});
