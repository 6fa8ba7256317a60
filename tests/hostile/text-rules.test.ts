/**
 * The text rules (src/domain/text-rules.ts) on the running service: every text field of
 * POST /v1/metadata and POST /v1/tokens refuses broken text, and what a build records is byte for
 * byte what lands on chain.
 */
import { PublicKey } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { rendersBlank, TEXT_MESSAGES, textProblem } from "../../src/domain/text-rules.ts";
import { decodeMetadataAccount } from "../../src/solana/token-metadata.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

const IMAGE = toBase64(makePng(2, 2));

async function post(h: Harness, apiKey: string, path: string, json: unknown) {
  const res = await h.request(path, { method: "POST", headers: bearer(apiKey), json });
  return { status: res.status, body: await res.json() };
}

Deno.test("the text rules, one character class at a time", () => {
  const cases: [string, "name" | "symbol" | "line" | "multiline", string | null][] = [
    ["\ud800abc", "name", TEXT_MESSAGES.malformed],
    ["abc\udfff", "multiline", TEXT_MESSAGES.malformed],
    ["a\u0000b", "line", TEXT_MESSAGES.control],
    ["a\u0000b", "multiline", TEXT_MESSAGES.control],
    ["line one\nline two\ttab", "multiline", null],
    ["line one\nline two", "line", TEXT_MESSAGES.control],
    ["a\u202Eb", "multiline", TEXT_MESSAGES.bidi],
    ["a\u2067b", "line", TEXT_MESSAGES.bidi],
    ["\u3164", "name", TEXT_MESSAGES.blank],
    ["AB\u3164CD", "symbol", TEXT_MESSAGES.symbolSpace],
    ["AB\u2800CD", "symbol", TEXT_MESSAGES.symbolSpace],
    ["A\u2800B", "name", TEXT_MESSAGES.blank],
    ["x\u2062y", "name", TEXT_MESSAGES.blank],
    ["\u115F\u1160", "name", TEXT_MESSAGES.blank],
    ["A\uFFA0B", "name", TEXT_MESSAGES.blank],
    ["A\u00A0B", "symbol", TEXT_MESSAGES.symbolSpace],
    ["A\u3000B", "symbol", TEXT_MESSAGES.symbolSpace],
    ["A\u200BB", "symbol", TEXT_MESSAGES.symbolSpace],
    ["A\u200DB", "symbol", TEXT_MESSAGES.symbolSpace],
    ["A\u{E0041}B", "name", TEXT_MESSAGES.blank],
    ["Moon Cat", "name", null],
    ["Family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}", "name", null],
    ["\u2764\uFE0F", "symbol", null],
    ["月光", "symbol", null],
  ];
  for (const [s, kind, want] of cases) {
    assertEquals(textProblem(s, kind), want, `${JSON.stringify(s)} as ${kind}`);
  }
  assert(rendersBlank("\u3164\u3164"));
  assert(rendersBlank(" \u2800\u200B "));
  assert(!rendersBlank("a\u3164"));
});

Deno.test("POST /v1/metadata and /v1/tokens refuse broken text in every text field", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const meta = { name: "Plain Token", symbol: "PLN", imageBase64: IMAGE };
    const metaCases: [Record<string, unknown>, string, string][] = [
      [{ name: "Bad\ud800" }, "name", TEXT_MESSAGES.malformed],
      [{ name: "\u3164\u3164\u3164" }, "name", TEXT_MESSAGES.blank],
      [{ name: "\u2800" }, "name", TEXT_MESSAGES.blank],
      [{ symbol: "AB\u3164CD" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ symbol: "AB\u2063CD" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ description: "hello\u0000world" }, "description", TEXT_MESSAGES.control],
      [{ description: "hello \u202Edlrow" }, "description", TEXT_MESSAGES.bidi],
      [{ description: "half \udc00" }, "description", TEXT_MESSAGES.malformed],
      [
        { attributes: [{ trait_type: "mood", value: "calm\u0000" }] },
        "attributes.0.value",
        TEXT_MESSAGES.control,
      ],
      [
        { attributes: [{ trait_type: "mood", value: "\u202Ecalm" }] },
        "attributes.0.value",
        TEXT_MESSAGES.bidi,
      ],
      [
        { attributes: [{ trait_type: "mo\u2066od", value: "calm" }] },
        "attributes.0.trait_type",
        TEXT_MESSAGES.bidi,
      ],
    ];
    for (const [patch, field, message] of metaCases) {
      const r = await post(h, apiKey, "/v1/metadata", { ...meta, ...patch });
      assertEquals(r.status, 400, JSON.stringify(patch));
      assertEquals(r.body.error.fields[field], message, JSON.stringify(r.body));
    }

    const token = {
      payer: wallet.publicKey.toBase58(),
      name: "Plain Token",
      symbol: "PLN",
      metadataUri: "https://example.com/plain.json",
      supply: "1000",
    };
    const tokenCases: [Record<string, unknown>, string, string][] = [
      [{ name: "Lone \ud800" }, "name", TEXT_MESSAGES.malformed],
      [{ name: "\u3164" }, "name", TEXT_MESSAGES.blank],
      [{ name: "Nul\u0000" }, "name", TEXT_MESSAGES.control],
      [{ symbol: "AB\u3164CD" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ symbol: "A\u2800B" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ symbol: "A\u205FB" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ name: "\u202ECDSU" }, "name", TEXT_MESSAGES.bidi],
    ];
    for (const [patch, field, message] of tokenCases) {
      const r = await post(h, apiKey, "/v1/tokens", { ...token, ...patch });
      assertEquals(r.status, 400, JSON.stringify(patch));
      assertEquals(r.body.error.fields[field], message, JSON.stringify(r.body));
    }

    // What the build records is byte for byte what lands on chain, for text beyond ASCII.
    const name = "Caf\u00e9 \u2615 \u6708 \u{1F468}\u200D\u{1F469}";
    const symbol = "\u00c7A\u2615";
    const built = await post(h, apiKey, "/v1/tokens", { ...token, name, symbol });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    const tx = decodeTx(built.body.transaction);
    tx.sign([wallet]);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    const account = await h.services.connection.getAccountInfo(
      new PublicKey(built.body.metadataAccount),
      "confirmed",
    );
    const onChain = decodeMetadataAccount(account!.data);
    const record = await (await h.request(`/v1/tokens/${built.body.mint}`, {
      headers: bearer(apiKey),
    })).json();
    const utf8 = (s: string) => Array.from(new TextEncoder().encode(s));
    assertEquals(utf8(record.name), utf8(onChain.name));
    assertEquals(utf8(record.symbol), utf8(onChain.symbol));
    assertEquals(record.name, name);
    assertEquals(record.symbol, symbol);
  } finally {
    await h.close();
  }
});
