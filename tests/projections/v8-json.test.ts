/**
 * The transcoder from V8's serialization to JSON text (projections/v8-json.ts) writes exactly the
 * UTF-8 bytes of `JSON.stringify` of the value, for values serialized by node:v8 and by Deno KV
 * itself, and declines (leaving the output as it was) whatever is not plain data.
 */
import fc from "fast-check";
import { deserialize, serialize } from "node:v8";
import { v8ToJson } from "../../projections/v8-json.ts";
import { ByteSink } from "../../src/kernel/json-bytes.ts";
import { KvFile } from "../../events/kv-file.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { withTempDir } from "../support/temp-dir.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function transcoded(bytes: Uint8Array): string | null {
  const sink = new ByteSink();
  sink.ascii("prefix:");
  if (!v8ToJson(bytes, sink)) {
    assertEquals(dec.decode(sink.bytes()), "prefix:", "declined output leaves the sink as it was");
    return null;
  }
  return dec.decode(sink.bytes()).slice("prefix:".length);
}

/** Strings with what JSON escapes or V8 stores two bytes wide: controls, quotes, lone surrogates. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({
    unit: fc.constantFrom(
      "\u0000",
      "\u001f",
      '"',
      "\\",
      "\u00e9",
      "\u2028",
      "\ud800",
      "\udc00",
      "😀",
      "a",
    ),
  }),
);
const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, NaN, Infinity, -Infinity, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e21, 5e-324),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(tie("value"), fc.constant(undefined)), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(text, fc.nat().map(String)),
      fc.oneof(tie("value"), fc.constant(undefined)),
      {
        maxKeys: 6,
      },
    ),
  ),
}));

Deno.test("v8 to JSON: the bytes of JSON.stringify for any plain value node:v8 serializes", () => {
  fc.assert(
    fc.property(value, (v) => {
      const bytes = new Uint8Array(serialize(v));
      const got = transcoded(bytes);
      assert(got !== null, `declined ${JSON.stringify(v)}`);
      assertEquals(enc.encode(got), enc.encode(JSON.stringify(v)));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("v8 to JSON: undefined in arrays is null, undefined properties are left out", () => {
  const v = { a: [1, undefined, 3], b: undefined, c: { d: undefined }, 7: "x" };
  assertEquals(transcoded(new Uint8Array(serialize(v))), '{"7":"x","a":[1,null,3],"c":{}}');
  // Holes (V8 writes such arrays as sparse ones) are null too, up to the length.
  // deno-lint-ignore no-sparse-arrays
  const holey = [1, , 3, , ,];
  assertEquals(transcoded(new Uint8Array(serialize(holey))), "[1,null,3,null,null]");
  assertEquals(transcoded(new Uint8Array(serialize(new Array(3)))), "[null,null,null]");
});

Deno.test("v8 to JSON: declines what is not plain data, and bytes that are not V8's", () => {
  const shared = { x: 1 };
  const arrayWithProp = Object.assign([1, 2], { extra: 1 });
  for (
    const v of [
      new Date(0),
      10n,
      { n: 10n },
      new Map([[1, 2]]),
      { a: shared, b: shared },
      arrayWithProp,
      new Uint8Array([1]),
      Object(1),
    ]
  ) {
    assertEquals(transcoded(new Uint8Array(serialize(v))), null, String(v));
  }
  assertEquals(transcoded(new Uint8Array([])), null);
  // An older format version, and an int whose varint runs past 32 bits: left to V8's reader.
  const old = new Uint8Array(serialize({ a: 1 }));
  old[1] = 12;
  assertEquals(transcoded(old), null);
  assertEquals(transcoded(new Uint8Array([0xff, 0x0f, 0x49, 0xff, 0xff, 0xff, 0xff, 0x7f])), null);
});

Deno.test("v8 to JSON: declines what V8 itself refuses to read (Deno KV could not read it either)", () => {
  const a = [0x22, 1, 0x61]; // the one-byte string "a"
  const refused = [
    // A version past V8's own, and one spelled as a two-byte varint.
    [0xff, 17, 0x6f, ...a, 0x49, 2, 0x7b, 1],
    [0xff, 0x8d, 0x6f, ...a, 0x49, 2, 0x7b, 1],
    // A repeated key (the second one undefined, which JSON.stringify would have left out).
    [0xff, 0x0f, 0x6f, ...a, 0x49, 2, ...a, 0x5f, 0x7b, 2],
    // A hole in a sparse array (holes belong to dense ones).
    [0xff, 0x0f, 0x61, 2, 0x49, 0, 0x2d, 0x40, 1, 2],
  ];
  for (const bytes of refused) {
    const b = new Uint8Array(bytes);
    let v8Reads = true;
    try {
      deserialize(b);
    } catch {
      v8Reads = false;
    }
    assertEquals(v8Reads, false, `V8 refuses ${bytes}`);
    assertEquals(transcoded(b), null, `declined ${bytes}`);
  }
  // The version Deno KV writes is read.
  assertEquals(transcoded(new Uint8Array([0xff, 16, 0x6f, ...a, 0x49, 2, 0x7b, 1])), '{"a":1}');
  assertEquals(transcoded(new Uint8Array([0x7b, 0x7d])), null);
  // Cut short inside a string, and a trailing byte after the value.
  const whole = new Uint8Array(serialize({ s: "abcdef" }));
  assertEquals(transcoded(whole.subarray(0, whole.length - 3)), null);
  assertEquals(transcoded(new Uint8Array([...whole, 0x30])), null);
});

Deno.test("v8 to JSON: values as Deno KV stores them in its file", async () => {
  await withTempDir("tcb-v8-json-", async (dir) => {
    const values = fc.sample(value, { numRuns: 300, seed: 17 });
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    for (let i = 0; i < values.length; i++) await kv.set(["v", i], values[i]);
    const read = await Array.fromAsync(kv.list<unknown>({ prefix: ["v"] }));
    kv.close();
    const file = KvFile.open(`${dir}/kv.sqlite3`)!;
    let n = 0;
    for (const page of file.pages(new Uint8Array([0x02, 0x76, 0x00]), 64)) {
      for (const row of page) {
        const expected = read[n++].value;
        const got = transcoded(row.value);
        assertEquals(got, JSON.stringify(expected) ?? "null");
      }
    }
    file.close();
    assertEquals(n, values.length);
  });
});
