/**
 * Bad input, property-based (fast-check): random and malformed bodies, headers, path
 * parameters, base64 and base58 thrown at every endpoint of the running service (in-process,
 * on the embedded chain). Every answer is below 500, and every 4xx is the seed's error shape.
 *
 * No generated input can make the service reach outside this machine: image URLs are random
 * text (never a valid https URL) or IP literals in refused ranges, so no DNS lookup happens.
 */
import fc from "fast-check";
import bs58 from "bs58";
import { assert } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { assertErrorShape } from "./support.ts";

const RUNS = 300;
const ADMIN_TOKEN = "admin-token-for-the-fuzz-test-0123456789abcdef";

interface Target {
  name: string;
  method: string;
  path: fc.Arbitrary<string>;
  body?: fc.Arbitrary<string | undefined>;
  /** Which credential a request carries: the API key, the portal cookie or the admin token. */
  auth: "key" | "portal" | "admin" | "none";
}

const latin1 = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 80,
});
const anyText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
);
const segment = fc.oneof(
  anyText.map((s) => encodeURIComponent(s)),
  fc.constantFrom("..", "%2e%2e", "%00", "%ff", "a%2Fb", "0".repeat(300), "null", "-1", "1e309"),
  fc.uint8Array({ minLength: 0, maxLength: 70 }).map((b) => bs58.encode(b)),
  fc.stringMatching(/^[0-9a-f]{0,70}$/),
);
const base64ish = fc.oneof(
  fc.uint8Array({ maxLength: 600 }).map((b) => toBase64(b)),
  fc.uint8Array({ maxLength: 300 }).map((b) => `data:image/png;base64,${toBase64(b)}`),
  fc.constantFrom(
    toBase64(makePng(2, 2)).slice(0, 40),
    `${toBase64(makePng(2, 2))}=`,
    `data:image/svg+xml;base64,${btoa("<svg/>")}`,
    "====",
    "a",
    " ",
    "\u0000",
  ),
  anyText,
);
const base58ish = fc.oneof(
  fc.uint8Array({ maxLength: 70 }).map((b) => bs58.encode(b)),
  fc.constantFrom(
    "11111111111111111111111111111111",
    "0OIl",
    "",
    "So11111111111111111111111111111111111111112",
  ),
  anyText,
);
/** Never a fetchable https URL with a host name: text, or literals the SSRF policy refuses. */
const imageUrlish = fc.oneof(
  anyText.filter((s) => !/^\s*https:\/\/[a-z]/i.test(s)),
  fc.constantFrom(
    "https://127.0.0.1/a.png",
    "https://10.0.0.1/a.png",
    "https://[::1]/a.png",
    "http://1.1.1.1/a.png",
    "https://user:pw@127.0.0.1/a.png",
    "ftp://127.0.0.1/a.png",
    "https://0x7f000001/a.png",
  ),
);
const jsonValue = fc.jsonValue({ maxDepth: 3 });
/** An object with the endpoint's field names, each holding something random or wrong-typed. */
const fields = (names: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(
    Object.fromEntries(
      Object.entries(names).map(([k, a]) => [k, fc.oneof(a, jsonValue, fc.constant(undefined))]),
    ),
    { requiredKeys: [] },
  ).chain((o) =>
    fc.oneof(
      fc.constant(o),
      fc.dictionary(fc.string({ maxLength: 12 }), jsonValue, { maxKeys: 3 }).map((extra) => ({
        ...extra,
        ...o,
      })),
    )
  );
const bodyOf = (obj: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 6, arbitrary: obj.map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: jsonValue.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: anyText },
    { weight: 1, arbitrary: obj.map((o) => JSON.stringify(o).slice(0, -1)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

const tokenBody = fields({
  payer: base58ish,
  name: anyText,
  symbol: anyText,
  metadataUri: fc.oneof(anyText, fc.constant("https://example.com/m/x.json")),
  supply: fc.oneof(anyText, fc.bigInt().map(String), fc.double().map(String)),
  supplyRaw: fc.oneof(anyText, fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String)),
  decimals: fc.oneof(fc.integer({ min: -5, max: 20 }), fc.double()),
  recipient: base58ish,
  revokeMint: fc.oneof(fc.boolean(), anyText),
  revokeFreeze: fc.boolean(),
  immutableMetadata: fc.boolean(),
});
const metadataBody = fields({
  name: anyText,
  symbol: anyText,
  description: anyText,
  imageBase64: base64ish,
  imageUrl: imageUrlish,
  website: anyText,
  twitter: anyText,
  telegram: anyText,
  discord: anyText,
  attributes: fc.array(
    fc.record({ trait_type: anyText, value: fc.oneof(anyText, fc.double(), jsonValue) }),
    { maxLength: 12 },
  ),
});

const targets: Target[] = [
  {
    name: "POST /v1/tokens",
    method: "POST",
    path: fc.constant("/v1/tokens"),
    body: bodyOf(tokenBody),
    auth: "key",
  },
  {
    name: "POST /v1/metadata",
    method: "POST",
    path: fc.constant("/v1/metadata"),
    body: bodyOf(metadataBody),
    auth: "key",
  },
  {
    name: "POST /v1/transactions",
    method: "POST",
    path: fc.constant("/v1/transactions"),
    body: bodyOf(
      fields({
        transaction: fc.oneof(
          base64ish,
          fc.uint8Array({ minLength: 60, maxLength: 1300 }).map(toBase64),
        ),
      }),
    ),
    auth: "key",
  },
  {
    name: "GET /v1/transactions/{sig}",
    method: "GET",
    path: fc.oneof(segment, base58ish.map(encodeURIComponent)).map((s) => `/v1/transactions/${s}`),
    auth: "key",
  },
  {
    name: "GET /v1/tokens/{mint}",
    method: "GET",
    path: fc.oneof(segment, base58ish.map(encodeURIComponent)).map((s) => `/v1/tokens/${s}`),
    auth: "key",
  },
  { name: "GET /v1/me", method: "GET", path: fc.constant("/v1/me"), auth: "key" },
  { name: "GET /v1/pricing", method: "GET", path: fc.constant("/v1/pricing"), auth: "none" },
  { name: "any /v1/{random}", method: "GET", path: segment.map((s) => `/v1/${s}`), auth: "key" },
  { name: "GET /m/{file}", method: "GET", path: segment.map((s) => `/m/${s}`), auth: "none" },
  { name: "GET /i/{file}", method: "GET", path: segment.map((s) => `/i/${s}`), auth: "none" },
  {
    name: "POST /portal/api/challenge",
    method: "POST",
    path: fc.constant("/portal/api/challenge"),
    body: bodyOf(fields({ wallet: base58ish })),
    auth: "none",
  },
  {
    name: "POST /portal/api/session",
    method: "POST",
    path: fc.constant("/portal/api/session"),
    body: bodyOf(fields({ wallet: base58ish, nonce: anyText, signature: base58ish })),
    auth: "none",
  },
  {
    name: "POST /portal/api/purchases",
    method: "POST",
    path: fc.constant("/portal/api/purchases"),
    body: bodyOf(
      fields({ currency: fc.oneof(fc.constantFrom("SOL", "STABLECOIN", "sol"), anyText) }),
    ),
    auth: "portal",
  },
  {
    name: "POST /portal/api/{purchases|keys}/{id}/...",
    method: "POST",
    path: fc.tuple(
      fc.constantFrom("purchases", "keys"),
      segment,
      fc.constantFrom("check", "key", "rotate", "delete", "x"),
    ).map(
      ([a, id, b]) => `/portal/api/${a}/${id}/${b}`,
    ),
    body: bodyOf(fields({})),
    auth: "portal",
  },
  {
    name: "GET /admin/keys/{id}",
    method: "GET",
    path: segment.map((s) => `/admin/keys/${s}`),
    auth: "admin",
  },
  {
    name: "POST /admin/keys/{id}/ban",
    method: "POST",
    path: segment.map((s) => `/admin/keys/${s}/ban`),
    body: bodyOf(fields({ reason: anyText })),
    auth: "admin",
  },
];

/** Valid credentials sometimes, broken ones otherwise: fuzzing must reach past auth too. */
function credential(kind: Target["auth"], valid: { apiKey: string; cookie: string }) {
  const mangled = (s: string) =>
    fc.tuple(fc.nat(s.length - 1), latin1).map(([i, t]) => s.slice(0, i) + t + s.slice(i + 1));
  if (kind === "key") {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant(bearer(valid.apiKey)) },
      {
        weight: 1,
        arbitrary: mangled(valid.apiKey).map((k) => ({ authorization: `Bearer ${k}` })),
      },
      { weight: 1, arbitrary: latin1.map((a) => ({ authorization: a })) },
      { weight: 1, arbitrary: fc.constant({}) },
    );
  }
  if (kind === "portal") {
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant({ cookie: valid.cookie }) },
      { weight: 1, arbitrary: latin1.map((c) => ({ cookie: c })) },
      { weight: 1, arbitrary: fc.constant({}) },
    );
  }
  if (kind === "admin") {
    return fc.oneof(
      fc.constant(bearer(ADMIN_TOKEN)),
      mangled(ADMIN_TOKEN).map((t) => bearer(t)),
      latin1.map((a) => ({ authorization: a })),
    );
  }
  return fc.constant({});
}

const extraHeaders = fc.record({
  "content-type": fc.oneof(
    fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "text/plain",
      "application/x-www-form-urlencoded",
      "",
    ),
    latin1,
  ),
  "idempotency-key": fc.oneof(latin1, fc.uuid()),
  "if-none-match": latin1,
  origin: fc.constantFrom("http://127.0.0.1:8000", "https://evil.example", "null"),
  "sec-fetch-site": fc.constantFrom("same-origin", "cross-site", "none"),
}, { requiredKeys: [] });

Deno.test("bad input at every endpoint: always below 500, every 4xx in the seed's error shape", async (t) => {
  const h: Harness = await startHarness({
    env: {
      REQUESTS_PER_HOUR: "1000000",
      TOKENS_PER_DAY: "100000",
      METADATA_PER_DAY: "100000",
      ADMIN_TOKEN,
      LOG_LEVEL: "info",
    },
  });
  try {
    const { apiKey, cookie } = await h.newApiKey();
    const counts: Record<string, Record<number, number>> = {};
    for (const target of targets) {
      await t.step(target.name, async () => {
        const seen: Record<number, number> = (counts[target.name] = {});
        await fc.assert(
          fc.asyncProperty(
            target.path,
            target.body ?? fc.constant(undefined),
            credential(target.auth, { apiKey, cookie }),
            extraHeaders,
            async (path, body, auth, extra) => {
              const headers = new Headers({ ...extra, ...auth } as Record<string, string>);
              if (body !== undefined && !extra["content-type"] && Math.random() < 0.8) {
                headers.set("content-type", "application/json");
              }
              let res: Response;
              try {
                res = await h.request(path, {
                  method: target.method,
                  headers,
                  body: target.method === "GET" ? undefined : body,
                });
              } catch (e) {
                // A request the client itself refuses to build (an invalid URL) never reaches us.
                if (e instanceof TypeError && /URL|header/i.test(e.message)) return;
                throw e;
              }
              seen[res.status] = (seen[res.status] ?? 0) + 1;
              const text = await res.text();
              assert(
                res.status < 500,
                `${target.method} ${path} -> ${res.status} ${text.slice(0, 300)}`,
              );
              if (res.status >= 400) {
                let parsed: unknown;
                try {
                  parsed = JSON.parse(text);
                } catch {
                  throw new Error(
                    `${target.method} ${path} -> ${res.status} non-JSON body ${text.slice(0, 200)}`,
                  );
                }
                assertErrorShape(parsed, `${target.method} ${path} -> ${res.status}`);
              }
            },
          ),
          { numRuns: RUNS },
        );
      });
    }
    console.log(`fuzz answers by endpoint: ${JSON.stringify(counts)}`);
    const errors = h.logs.filter((l) => l.includes('"unhandled error"'));
    assert(errors.length === 0, `unhandled errors logged: ${errors.slice(0, 3).join("\n")}`);
  } finally {
    await h.close();
  }
});
