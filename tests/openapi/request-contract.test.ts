/**
 * The document is as strict as the server: over generated bodies, valid ones and near misses,
 * a JSON Schema validator (Ajv, draft 2020-12) on the served document's request schema accepts
 * exactly the bodies the route's own parser accepts. And every example in the document validates
 * against its schema.
 *
 * The bodies stay where JSON Schema can decide. What the document states only in words is left
 * out on purpose: UTF-8 byte counts beyond ASCII, the text rules (control characters, marks, the
 * symbol set), well-known names (the parser runs with an empty list), a base58 string that does
 * not decode to 32 bytes or an address off the ed25519 curve, the link hosts, and imageUrl's
 * fetch-time checks.
 */
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import bs58 from "bs58";
import { ed25519 } from "@noble/curves/ed25519";
import { assert, assertEquals } from "../support/assert.ts";
import { openApiDocument } from "../../src/openapi/document.ts";
import { parseBuildRequest, U64_MAX } from "../../src/tokens/request-schema.ts";
import { parseMetadataRequest } from "../../src/metadata/request.ts";
import { ApiError } from "../../src/kernel/errors.ts";

type Json = Record<string, unknown>;
const doc = openApiDocument({ serverUrl: "https://api.example.test" }) as unknown as Json;
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema(doc, "doc");
const validator = (name: string) => {
  const v = ajv.getSchema(`doc#/components/schemas/${name}`);
  assert(v, name);
  return v;
};

const NO_WELL_KNOWN = { match: () => null };
const RUNS = { numRuns: 3000 };

/** Whether the parser accepts the body; any other exception is a failure of its own. */
function accepts(parse: (raw: unknown) => unknown, body: unknown): boolean {
  try {
    parse(body);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) return false;
    throw e;
  }
}

function agree(schema: string, parse: (raw: unknown) => unknown, body: fc.Arbitrary<unknown>) {
  const validate = validator(schema);
  let accepted = 0;
  fc.assert(
    fc.property(body, (b) => {
      const server = accepts(parse, b);
      if (server) accepted++;
      assertEquals(validate(b), server, `document ${!server ? "accepts" : "refuses"} it`);
    }),
    RUNS,
  );
  return accepted;
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const chars = (alphabet: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });
const ALNUM = BASE58 + "0OIl";
// Letters whose other case is ASCII base58 ("ſ" is "S" upper-cased, the Kelvin sign "k" lowered).
const VANITY_MISSES = ALNUM + "\u017f\u212a-";

// A pool of wallets (keys on the curve), made once: deriving one per body is most of the time.
const WALLETS = fc.sample(fc.uint8Array({ minLength: 32, maxLength: 32 }), {
  numRuns: 64,
  seed: 44,
})
  .map((seed) => bs58.encode(ed25519.getPublicKey(seed)));
const wallet = fc.constantFrom(...WALLETS);
// Not an address by its spelling, which the document's pattern decides.
const notAddress = fc.oneof(
  chars(BASE58 + "0", 30, 46).filter((s) => !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)),
  fc.constant(42),
);
// Any 32 bytes: on the curve or not, which only a payer must be (said in words).
const address = fc.oneof(
  wallet,
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bs58.encode(b)),
  notAddress,
);
// Decimal strings around the bounds, some with a leading zero, some not digits at all.
const amount = fc.oneof(
  { weight: 4, arbitrary: fc.bigInt({ min: 1n, max: 1_000_000_000n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: U64_MAX }) },
  { weight: 1, arbitrary: fc.bigInt({ min: U64_MAX - 1000n, max: U64_MAX + 1000n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: U64_MAX * 1000n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 20n }) },
).chain((n) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(String(n)) },
    { weight: 1, arbitrary: fc.constant(`0${n}`) },
    { weight: 1, arbitrary: fc.constant(`${n}.5`) },
  )
);
const host = chars("abcdefghijklmnopqrstuvwxyz", 1, 12).map((h) => `${h}.example`);
const uri = fc.tuple(
  fc.oneof(
    { weight: 8, arbitrary: fc.constant("https://") },
    fc.constantFrom("http://", "ftp://", "HTTPS://", "https:", ""),
  ),
  host,
  fc.oneof(
    { weight: 4, arbitrary: chars("abcdefghijklmnopqrstuvwxyz0123456789", 0, 20) },
    chars("abcdefghijklmnopqrstuvwxyz0123456789", 170, 200),
  ),
).map(([scheme, h, path]) => `${scheme}${h}/${path}`);

/** Mostly a valid value, sometimes a near miss. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, miss: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: miss });

const tokenBody = fc.record({
  payer: mostly(wallet, notAddress),
  name: mostly(chars(ALNUM, 1, 32), chars(ALNUM, 0, 34)),
  symbol: mostly(
    chars("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 1, 10),
    chars("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 0, 11),
  ),
  metadataUri: uri,
  supply: amount,
  supplyRaw: amount,
  decimals: mostly(
    fc.integer({ min: 0, max: 9 }),
    fc.oneof(fc.integer({ min: -1, max: 10 }), fc.constant(2.5), fc.constant("6")),
  ),
  recipient: mostly(wallet, address),
  revokeMint: mostly(fc.boolean(), fc.constant("yes")),
  tokenProgram: mostly(fc.constantFrom("spl-token", "token-2022"), fc.constant("token-2023")),
  transferFee: fc.record({
    basisPoints: mostly(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: -1, max: 10_001 })),
    maximum: amount,
    permanent: fc.boolean(),
  }, { requiredKeys: ["basisPoints"] }),
  vanity: fc.record({
    prefix: mostly(chars(BASE58, 0, 2), chars(VANITY_MISSES, 0, 5)),
    suffix: mostly(chars(BASE58, 0, 2), chars(VANITY_MISSES, 0, 5)),
    ignoreCase: fc.boolean(),
  }, { requiredKeys: [] }),
  extra: fc.constant(true),
}, { requiredKeys: [] });

Deno.test("POST /v1/tokens: the document's schema accepts exactly the bodies the parser accepts", () => {
  const parse = (raw: unknown) => parseBuildRequest(raw, NO_WELL_KNOWN);
  const accepted = agree("TokenBuildRequest", parse, tokenBody);
  const required = fc.record({
    payer: wallet,
    name: chars(ALNUM, 1, 32),
    symbol: chars("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 1, 10),
    metadataUri: uri,
  });
  // Nearly valid bodies: the required members present, the rest as above.
  const near = fc.tuple(required, tokenBody).map(([r, rest]) => {
    const { payer: _p, name: _n, symbol: _s, metadataUri: _m, extra: _e, ...others } = rest;
    const oneSupply = "supply" in others && "supplyRaw" in others
      ? (({ supplyRaw: _r, ...o }) => o)(others)
      : others;
    return { ...r, ...oneSupply };
  });
  const acceptedNear = agree("TokenBuildRequest", parse, near);
  // The generators reach both verdicts, the accepting one often.
  assert(accepted + acceptedNear > 100, `accepted ${accepted} + ${acceptedNear}`);
});

Deno.test("POST /v1/tokens: handed-over authorities and their revoke conflicts agree with the parser", () => {
  const parse = (raw: unknown) => parseBuildRequest(raw, NO_WELL_KNOWN);
  const body = fc.record({
    payer: wallet,
    name: chars(ALNUM, 1, 32),
    symbol: chars("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 1, 10),
    metadataUri: fc.constant("https://example.com/m/token.json"),
    supply: fc.constant("1000"),
    extras: fc.record({
      revokeMint: mostly(fc.boolean(), fc.constant("yes")),
      revokeFreeze: mostly(fc.boolean(), fc.constant("yes")),
      mintAuthority: mostly(wallet, notAddress),
      freezeAuthority: mostly(wallet, notAddress),
      updateAuthority: mostly(wallet, notAddress),
    }, { requiredKeys: [] }),
  }).map(({ extras, ...b }) => ({ ...b, ...extras }));
  const accepted = agree("TokenBuildRequest", parse, body);
  assert(accepted > 50 && accepted < RUNS.numRuns!, `accepted ${accepted} of ${RUNS.numRuns}`);
});

const scheme = fc.oneof(
  { weight: 8, arbitrary: fc.constant("https://") },
  fc.constantFrom("http://", "HTTPS://", "https:", "ftp://"),
);
const link = (hosts: string[]) =>
  fc.tuple(
    scheme,
    fc.constantFrom(...hosts),
    fc.oneof(
      { weight: 8, arbitrary: chars("abcdefghijklmnopqrstuvwxyz0123456789", 0, 20) },
      chars("abcdefghijklmnopqrstuvwxyz0123456789", 230, 260),
    ),
  ).map(([s, h, p]) => `${s}${h}/${p}`);

const metadataBody = fc.record({
  name: fc.oneof(chars(ALNUM, 0, 34), fc.constant(7)),
  symbol: chars("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 0, 11),
  description: chars("abc \n", 0, 1002),
  imageUrl: chars("abcdefghijklmnopqrstuvwxyz", 0, 2050).map((p) => `https://img.example/${p}`),
  imageBase64: fc.constant("AAAA"),
  website: link(["example.com", "www.example.org"]),
  twitter: link(["x.com", "www.x.com", "twitter.com", "www.twitter.com"]),
  telegram: link(["t.me"]),
  discord: link(["discord.gg", "discord.com", "www.discord.com"]),
  attributes: fc.array(
    fc.record({
      trait_type: chars("abcdefghijklmnopqrstuvwxyz", 0, 66),
      value: fc.oneof(
        { weight: 4, arbitrary: chars("abcdef", 0, 10) },
        chars("abcdef", 195, 205),
        fc.integer(),
        fc.constant(null),
      ),
    }, { requiredKeys: ["trait_type"] }),
    { maxLength: 11, size: "small" },
  ),
  extra: fc.constant(true),
}, { requiredKeys: [] });

Deno.test("POST /v1/metadata: the document's schema accepts exactly the bodies the parser accepts", () => {
  const parse = (raw: unknown) => parseMetadataRequest(raw, NO_WELL_KNOWN);
  agree("MetadataRequest", parse, metadataBody);
  const near = fc.tuple(
    fc.record({ name: chars(ALNUM, 1, 32), symbol: chars("ABCDEFGHJKLMNPQRSTUVWXYZ", 1, 10) }),
    metadataBody,
  ).map(([r, rest]) => {
    const { extra: _e, imageUrl: _u, ...others } = rest;
    return { ...r, imageBase64: "AAAA", ...others };
  });
  const accepted = agree("MetadataRequest", parse, near);
  assert(accepted > 100, `valid bodies are reached: ${accepted}`);
});

Deno.test("the u64 and vanity bounds the document states are exact at their edges", () => {
  const v = validator("TokenBuildRequest");
  const base = {
    payer: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
    name: "N",
    symbol: "S",
    metadataUri: "https://a.example/m.json",
  };
  const cases: [Json, boolean][] = [
    [{ supplyRaw: String(U64_MAX) }, true],
    [{ supplyRaw: String(U64_MAX + 1n) }, false],
    [{ supplyRaw: "0" }, false],
    [{ supplyRaw: "01" }, false],
    [{ supply: "18446744073", decimals: 9 }, true],
    [{ supply: "18446744074", decimals: 9 }, false],
    [{ supply: "18446744074" }, false], // decimals default to 9
    [{ supply: "18446744074", decimals: 8 }, true],
    [{ supply: "1", transferFee: { basisPoints: 1, maximum: "0" } }, false],
    [
      { supply: "1", tokenProgram: "token-2022", transferFee: { basisPoints: 1, maximum: "0" } },
      true,
    ],
    [{ supply: "1", vanity: { prefix: "ab", suffix: "cd" } }, true],
    [{ supply: "1", vanity: { prefix: "ab", suffix: "cde" } }, false],
    [{ supply: "1", vanity: {} }, false],
    [{ supply: "1", vanity: { prefix: "l" } }, false],
    [{ supply: "1", vanity: { prefix: "l", ignoreCase: true } }, true],
    [{ supply: "1", vanity: { prefix: "\u017f", ignoreCase: true } }, false], // "ſ", not "S"
    // Once a 500: BigInt() met a maximum the pattern had already refused.
    [
      { supply: "1", tokenProgram: "token-2022", transferFee: { basisPoints: 1, maximum: "2.5" } },
      false,
    ],
  ];
  for (const [patch, expected] of cases) {
    const body = { ...base, ...patch };
    assertEquals(v(body), expected, JSON.stringify(patch));
    assertEquals(accepts((raw) => parseBuildRequest(raw, NO_WELL_KNOWN), body), expected);
  }
});

Deno.test("every example in the document validates against its schema", () => {
  let checked = 0;
  const check = (schema: Json | undefined, example: unknown, where: string) => {
    if (!schema || example === undefined) return;
    const ok = ajv.validate(schema.$ref ? { $ref: `doc${schema.$ref}` } : schema, example);
    assert(ok, `${where}: ${ajv.errorsText()}`);
    checked++;
  };
  const media = (content: unknown, where: string) => {
    const m = (content as Json | undefined)?.["application/json"] as Json | undefined;
    if (!m?.schema) return;
    check(m.schema as Json, m.example, where);
    for (const [k, e] of Object.entries((m.examples ?? {}) as Record<string, Json>)) {
      check(m.schema as Json, e.value, `${where} ${k}`);
    }
  };
  const components = doc.components as Json;
  for (const [name, r] of Object.entries(components.responses as Record<string, Json>)) {
    media(r.content, `response ${name}`);
  }
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      const where = `${method.toUpperCase()} ${path}`;
      media((op.requestBody as Json | undefined)?.content, `${where} request`);
      for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        media(r.content, `${where} ${status}`);
      }
    }
  }
  assert(checked > 30, `checked ${checked}`);
});

Deno.test("request examples are bodies the parsers accept, and every path parameter has an example", () => {
  const example = (path: string) =>
    ((((doc.paths as Json)[path] as Json).post as Json).requestBody as Json).content as Json;
  const body = (path: string) => (example(path)["application/json"] as Json).example;
  parseBuildRequest(body("/v1/tokens"), NO_WELL_KNOWN);
  parseMetadataRequest(body("/v1/metadata"), NO_WELL_KNOWN);
  let params = 0;
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const op of Object.values(item as Record<string, Json>)) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in !== "path") continue;
        params++;
        assert(typeof p.example === "string" && p.example !== "", `${path} {${p.name}}`);
        assert(!/lorem|\{/i.test(p.example as string), `${path} {${p.name}}: ${p.example}`);
      }
    }
  }
  assert(params >= 6, `path parameters: ${params}`);
});
