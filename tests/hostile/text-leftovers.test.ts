/**
 * The text that still got through (issue 48, part 3), on the running service: each case is a 400
 * invalid_request naming the field, on every endpoint that takes it.
 */
import { assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

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
