/**
 * U+2028 (line separator) and U+2029 (paragraph separator) are not control characters, yet render
 * as line breaks: a one-line field (name, symbol, attribute name or value) refuses them, on the
 * running service too; a description keeps them, as it keeps newlines.
 */
import { assertEquals } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { TEXT_MESSAGES, textProblem } from "../../src/domain/text-rules.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

const IMAGE = toBase64(makePng(2, 2));

async function post(h: Harness, apiKey: string, path: string, json: unknown) {
  const res = await h.request(path, { method: "POST", headers: bearer(apiKey), json });
  return { status: res.status, body: await res.json() };
}

Deno.test("line and paragraph separators: refused in one-line fields, kept in a description", () => {
  for (const sep of ["\u2028", "\u2029"]) {
    for (const kind of ["name", "symbol", "line"] as const) {
      assertEquals(textProblem(`Two${sep}Lines`, kind), TEXT_MESSAGES.lineBreak, kind);
    }
    assertEquals(textProblem(`Two${sep}Lines`, "multiline"), null);
  }
});

Deno.test("POST /v1/metadata and /v1/tokens refuse a name or attribute value that breaks the line", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const meta = { name: "Plain Token", symbol: "PLN", imageBase64: IMAGE };
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "Real\u2028Project" }, "name"],
      [{ symbol: "AB\u2029" }, "symbol"],
      [{ attributes: [{ trait_type: "mood", value: "calm\u2028official" }] }, "attributes.0.value"],
      [{ attributes: [{ trait_type: "mo\u2029od", value: "calm" }] }, "attributes.0.trait_type"],
    ];
    for (const [patch, field] of cases) {
      const r = await post(h, apiKey, "/v1/metadata", { ...meta, ...patch });
      assertEquals(r.status, 400, JSON.stringify(patch));
      assertEquals(r.body.error.fields[field], TEXT_MESSAGES.lineBreak, JSON.stringify(r.body));
    }
    const described = await post(h, apiKey, "/v1/metadata", {
      ...meta,
      description: "first\u2028second",
    });
    assertEquals(described.status, 201, JSON.stringify(described.body));

    const token = {
      payer: wallet.publicKey.toBase58(),
      name: "Real\u2029Project",
      symbol: "PLN",
      metadataUri: "https://example.com/plain.json",
      supply: "1000",
    };
    const r = await post(h, apiKey, "/v1/tokens", token);
    assertEquals(r.status, 400);
    assertEquals(r.body.error.fields.name, TEXT_MESSAGES.lineBreak, JSON.stringify(r.body));
  } finally {
    await h.close();
  }
});
