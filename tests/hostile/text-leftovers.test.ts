/**
 * The text that still got through (issue 48, part 3), on the running service: each case is a 400
 * invalid_request naming the field, on every endpoint that takes it.
 */
import { assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { symbolCharacterMessage, TEXT_MESSAGES, textProblem } from "../../src/domain/text-rules.ts";

async function post(h: Harness, apiKey: string, path: string, json: unknown) {
  const res = await h.request(path, { method: "POST", headers: bearer(apiKey), json });
  return { status: res.status, body: await res.json() };
}

/** 2 x 2 PNG bytes whose base64 needs padding (its length is not a multiple of 3). */
function paddedPng(): string {
  for (let extra = 0;; extra++) {
    const b64 = toBase64(makePng(2, 2, 200 + extra));
    if (b64.endsWith("=")) return b64;
  }
}

Deno.test("imageBase64 without its = padding is refused naming the field; padded, with or without a data: prefix, it is hosted", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const b64 = paddedPng();
    const meta = { name: "Padded Token", symbol: "PAD" };
    for (
      const image of [b64.replace(/=+$/, ""), `data:image/png;base64,${b64.replace(/=+$/, "")}`]
    ) {
      const r = await post(h, apiKey, "/v1/metadata", { ...meta, imageBase64: image });
      assertEquals(r.status, 400, JSON.stringify(r.body));
      assertEquals(r.body.error.code, "invalid_request");
      assertMatch(r.body.error.fields.imageBase64, /padding required/);
    }
    for (const image of [b64, `data:image/png;base64,${b64}`]) {
      const r = await post(h, apiKey, "/v1/metadata", { ...meta, imageBase64: image });
      assertEquals(r.status, 201, JSON.stringify(r.body));
    }
  } finally {
    await h.close();
  }
});

Deno.test("a symbol with U+1D159 between its letters, and a name or description of 'a' and 31 marks, are refused naming the field", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const zalgo = "a" + "\u0301".repeat(31);
    const image = paddedPng();
    const metaCases: [Record<string, unknown>, string, string][] = [
      [{ symbol: "A\u{1D159}B" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ symbol: "B\u0336OB" }, "symbol", symbolCharacterMessage("\u0336")],
      [{ symbol: "ᴜsᴅ" }, "symbol", symbolCharacterMessage("ᴜ")],
      [{ name: zalgo }, "name", TEXT_MESSAGES.marks],
      [{ description: `fine text ${zalgo}` }, "description", TEXT_MESSAGES.marks],
      [{ name: "A\u{1D159}B" }, "name", TEXT_MESSAGES.blank],
    ];
    for (const [patch, field, message] of metaCases) {
      const body = { name: "Plain Token", symbol: "PLN", imageBase64: image, ...patch };
      const r = await post(h, apiKey, "/v1/metadata", body);
      assertEquals(r.status, 400, JSON.stringify(patch));
      assertEquals(r.body.error.code, "invalid_request");
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
      [{ symbol: "A\u{1D159}B" }, "symbol", TEXT_MESSAGES.symbolSpace],
      [{ symbol: "ＢＯＢ" }, "symbol", symbolCharacterMessage("Ｂ")],
      [{ name: "a" + "\u0301".repeat(15) }, "name", TEXT_MESSAGES.marks],
    ];
    for (const [patch, field, message] of tokenCases) {
      const r = await post(h, apiKey, "/v1/tokens", { ...token, ...patch });
      assertEquals(r.status, 400, JSON.stringify(patch));
      assertEquals(r.body.error.fields[field], message, JSON.stringify(r.body));
    }
    // Vietnamese (two marks on a letter, decomposed) and an emoji symbol still build.
    const ok = await post(h, apiKey, "/v1/tokens", {
      ...token,
      name: "Tie\u0302\u0301ng Vie\u0323\u0302t",
      symbol: "\u{1F680}$MOON",
    });
    assertEquals(ok.status, 201, JSON.stringify(ok.body));
  } finally {
    await h.close();
  }
});

Deno.test("Soiana and SOIANA beside the listed Solana are refused on both endpoints, naming the field and the listed name", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const image = paddedPng();
    for (const lookalike of ["Soiana", "SOIANA", "Bltcoln"]) {
      const token = await post(h, apiKey, "/v1/tokens", {
        payer: wallet.publicKey.toBase58(),
        name: lookalike,
        symbol: "OK",
        metadataUri: "https://example.com/t.json",
        supply: "1000",
      });
      assertEquals(token.status, 400, lookalike);
      assertMatch(token.body.error.fields.name, /well-known project "(Solana|Bitcoin)"/);
      const meta = await post(h, apiKey, "/v1/metadata", {
        name: "Fine Name",
        symbol: lookalike,
        imageBase64: image,
      });
      assertEquals(meta.status, 400, lookalike);
      assertMatch(meta.body.error.fields.symbol, /well-known project "(Solana|Bitcoin)"/);
    }
  } finally {
    await h.close();
  }
});

Deno.test("combining marks: up to 3 on one character pass in every field, a fourth is refused", () => {
  const fine = [
    "Tie\u0302\u0301ng Vie\u0323\u0302t", // Vietnamese, decomposed: 2 marks on a letter
    "Tiếng Việt", // the same, precomposed: NFD gives the same 2
    "\u0F66\u0F92\u0FB2\u0F7C", // Tibetan: a stack of 3 marks on one letter
    "a\u0301b\u0301c\u0301d\u0301", // one mark on each of four letters
    "1\uFE0F\u20E3", // a keycap emoji: 2 marks
  ];
  for (const kind of ["name", "line", "multiline"] as const) {
    for (const s of fine) assertEquals(textProblem(s, kind), null, `${s} as ${kind}`);
    for (const s of ["a\u0301\u0302\u0303\u0304", "e\u0323\u0302\u0301\u0300"]) {
      assertEquals(textProblem(s, kind), TEXT_MESSAGES.marks, `${s} as ${kind}`);
    }
  }
  assertEquals(textProblem("A\u0301\u0302\u0303\u0304", "symbol"), TEXT_MESSAGES.marks);
});
