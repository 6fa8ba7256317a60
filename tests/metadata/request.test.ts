import { assert, assertEquals } from "../support/assert.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import { type MetadataRequest, parseMetadataRequest } from "../../src/metadata/request.ts";

const BASE = { name: "Token", symbol: "TKN", imageBase64: "AAAA" };

/** The `fields` of the 400, or null when the body is accepted. */
function fieldsOf(body: unknown): Record<string, unknown> | null {
  try {
    parseMetadataRequest(body);
    return null;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    assertEquals(e.status, 400);
    assertEquals(e.code, "invalid_request");
    return e.fields;
  }
}

const ok = (patch: Record<string, unknown>) => {
  const f = fieldsOf({ ...BASE, ...patch });
  assertEquals(f, null, `expected ${JSON.stringify(patch)} to pass`);
};
const bad = (patch: Record<string, unknown>, field: string) => {
  const f = fieldsOf({ ...BASE, ...patch });
  assert(f !== null, `expected ${JSON.stringify(patch).slice(0, 80)} to fail`);
  assertEquals(Object.keys(f), [field], JSON.stringify(f));
  assertEquals(typeof f[field], "string");
};

Deno.test("a minimal and a full body are accepted; links come back normalised", () => {
  ok({});
  const full: MetadataRequest = parseMetadataRequest({
    name: "My Token",
    symbol: "MYT",
    description: "line one\nline two\ttabbed",
    imageUrl: "https://img.example/a.png",
    website: "https://example.com",
    twitter: "https://x.com/mytoken",
    telegram: "https://t.me/mytoken",
    discord: "https://discord.gg/abc",
    attributes: [{ trait_type: "kind", value: "meme" }, { trait_type: "rank", value: 1.5 }],
  });
  assertEquals(full.website, "https://example.com/");
  assertEquals(full.attributes?.length, 2);
});

Deno.test("name: required, not blank, at most 32 characters (code points), no control characters", () => {
  bad({ name: undefined }, "name");
  bad({ name: 42 }, "name");
  bad({ name: "" }, "name");
  bad({ name: "   " }, "name");
  ok({ name: "n".repeat(32) });
  bad({ name: "n".repeat(33) }, "name");
  ok({ name: "🚀".repeat(8) }); // 16 UTF-16 units, 8 characters, 32 bytes
  bad({ name: "🚀".repeat(33) }, "name");
  assertEquals(fieldsOf({ ...BASE, name: "🚀".repeat(33) })?.name, "at most 32 characters");
  bad({ name: "a\u0000b" }, "name");
  assertEquals((fieldsOf({ ...BASE, name: undefined }) ?? {}).name, "required");
});

Deno.test("symbol: required, at most 10 characters, no whitespace of any kind", () => {
  bad({ symbol: undefined }, "symbol");
  bad({ symbol: "" }, "symbol");
  ok({ symbol: "S".repeat(10) });
  bad({ symbol: "S".repeat(11) }, "symbol");
  for (const s of ["A B", "AB ", "A\tB", "A\u00a0B", "A\nB"]) bad({ symbol: s }, "symbol");
  ok({ symbol: "$WIF" });
});

Deno.test("name and symbol: no more UTF-8 bytes than a build on the document can carry", () => {
  // Eleven characters, 33 bytes: within the contract's 32 characters, but every build on it
  // would be refused (it must repeat the name, in at most 32 bytes), so it is not hosted.
  const f = fieldsOf({ ...BASE, name: "€".repeat(11) });
  assertEquals(Object.keys(f ?? {}), ["name"]);
  assertEquals(
    f?.name,
    "at most 32 bytes of UTF-8 (got 33): a build on this document repeats its name, and the " +
      "chain holds no more",
  );
  ok({ name: "€".repeat(10) + "ab" }); // 32 bytes
  ok({ symbol: "€€€E" }); // 10 bytes
  const s = fieldsOf({ ...BASE, symbol: "€€€€" }); // 4 characters, 12 bytes
  assertEquals(Object.keys(s ?? {}), ["symbol"]);
  assert(String(s?.symbol).startsWith("at most 10 bytes of UTF-8 (got 12)"));
  // Both at once, in one 400.
  assertEquals(Object.keys(fieldsOf({ ...BASE, name: "é".repeat(17), symbol: "€€€€" }) ?? {}), [
    "name",
    "symbol",
  ]);
});

Deno.test("description: optional, at most 1000 characters, newlines allowed", () => {
  ok({ description: "d".repeat(1000) });
  bad({ description: "d".repeat(1001) }, "description");
  ok({ description: "a\r\nb\tc" });
  bad({ description: "bell\u0007" }, "description");
  bad({ description: null }, "description");
});

Deno.test("exactly one of imageUrl / imageBase64: both or neither names both", () => {
  const { imageBase64: _, ...noImage } = BASE;
  for (const body of [noImage, { ...BASE, imageUrl: "https://a.example/x.png" }]) {
    const f = fieldsOf(body)!;
    assertEquals(Object.keys(f).sort(), ["imageBase64", "imageUrl"]);
  }
  ok({ imageBase64: undefined, imageUrl: "https://a.example/x.png" });
  bad({ imageBase64: 12 }, "imageBase64");
  bad({ imageBase64: undefined, imageUrl: "https://a.example/" + "x".repeat(2048) }, "imageUrl");
});

Deno.test("website: an https URL, no credentials", () => {
  ok({ website: "https://example.com/path?q=1" });
  for (
    const w of [
      "http://example.com",
      "example.com",
      "ftp://example.com",
      "https://u:p@example.com",
      "javascript:alert(1)",
      "",
    ]
  ) {
    bad({ website: w }, "website");
  }
  bad({ website: "https://example.com/" + "p".repeat(300) }, "website");
});

Deno.test("twitter: https on x.com or twitter.com (and www.)", () => {
  for (
    const u of [
      "https://x.com/a",
      "https://twitter.com/a",
      "https://www.x.com/a",
      "https://WWW.Twitter.com/a",
    ]
  ) {
    ok({ twitter: u });
  }
  for (
    const u of [
      "http://x.com/a",
      "https://x.com.evil.example/a",
      "https://evilx.com/a",
      "https://mobile.twitter.com/a",
      "https://x.com:8443/a",
      "https://example.com/x.com",
    ]
  ) {
    bad({ twitter: u }, "twitter");
  }
});

Deno.test("telegram: https on t.me", () => {
  ok({ telegram: "https://t.me/group" });
  for (
    const u of ["http://t.me/group", "https://telegram.org/group", "https://t.me.evil.example/"]
  ) {
    bad({ telegram: u }, "telegram");
  }
});

Deno.test("discord: https on discord.gg or discord.com", () => {
  for (
    const u of [
      "https://discord.gg/abc",
      "https://discord.com/invite/abc",
      "https://www.discord.com/invite/abc",
    ]
  ) {
    ok({ discord: u });
  }
  for (
    const u of [
      "http://discord.gg/abc",
      "https://discordapp.com/abc",
      "https://discord.gg.evil.example/",
    ]
  ) {
    bad({ discord: u }, "discord");
  }
});

Deno.test("attributes: at most 10 items of {trait_type, value: string | finite number}, strict", () => {
  const attr = (i: number) => ({ trait_type: `t${i}`, value: i });
  ok({ attributes: [] });
  ok({ attributes: Array.from({ length: 10 }, (_, i) => attr(i)) });
  bad({ attributes: Array.from({ length: 11 }, (_, i) => attr(i)) }, "attributes");
  bad({ attributes: "x" }, "attributes");
  bad({ attributes: [{ trait_type: "a", value: true }] }, "attributes.0.value");
  bad({ attributes: [{ trait_type: "a", value: null }] }, "attributes.0.value");
  bad({ attributes: [{ trait_type: "a" }] }, "attributes.0.value");
  bad({ attributes: [{ value: "v" }] }, "attributes.0.trait_type");
  bad({ attributes: [{ trait_type: "", value: "v" }] }, "attributes.0.trait_type");
  bad({ attributes: [{ trait_type: "a", value: "v", extra: 1 }] }, "attributes.0.extra");
  bad({ attributes: [{ trait_type: "t".repeat(65), value: 1 }] }, "attributes.0.trait_type");
  bad({ attributes: [{ trait_type: "a", value: "v".repeat(201) }] }, "attributes.0.value");
  bad({ attributes: ["str"] }, "attributes.0");
  ok({ attributes: [{ trait_type: "a", value: -0.5 }, { trait_type: "b", value: "" }] });
});

Deno.test("unknown members are refused by name; every bad field is named at once", () => {
  bad({ creator: "me" }, "creator");
  const f = fieldsOf({
    name: "n".repeat(40),
    symbol: "A B",
    imageUrl: "https://a.example/x.png",
    imageBase64: "AAAA",
    website: "http://x",
    twitter: "https://evil.example",
    telegram: "https://evil.example",
    discord: "https://evil.example",
    attributes: [{ trait_type: "a", value: false }],
    mint: "x",
  })!;
  assertEquals(Object.keys(f).sort(), [
    "attributes.0.value",
    "discord",
    "imageBase64",
    "imageUrl",
    "mint",
    "name",
    "symbol",
    "telegram",
    "twitter",
    "website",
  ]);
});

Deno.test("a body that is not an object is refused", () => {
  for (const body of [null, [], "x", 5]) {
    const f = fieldsOf(body);
    assert(f !== null && Object.keys(f).length > 0);
  }
});

Deno.test("invisible formatting characters are refused in name and symbol, as in the build", () => {
  bad({ name: "\u202ECDSU" }, "name");
  bad({ name: "Zero\u200Bwidth" }, "name");
  bad({ symbol: "\u202ELOS" }, "symbol");
  // Joiners stay: an emoji family is a name.
  ok({ name: "Family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}" });
  // The description is free text and may hold them.
  ok({ description: "\u200Bnote" });
});
