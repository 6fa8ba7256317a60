/**
 * Typed reads everywhere: outside src/commands/read.ts and the log itself, no code reads a
 * projection document by its string name (`projectionKey("key", …)`) or casts a KV value to a
 * document type (`kv.get<KeyDoc>(…)`); it names the projection and gets its type from it.
 */
import { assert, assertEquals } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url);
const DIRS = ["src", "projections"];

/** A read by string name, or a KV read cast to a projection's document type. */
const UNTYPED = [
  /projectionKey\(\s*["'`]/,
  /\.(?:get|getMany|list)<[^>(]*\b[A-Z]\w*Doc\b/,
  /\.projection<[^>]*>\(\s*["'`]/,
];

async function files(dir: string, into: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) await files(path, into);
    else if (/\.tsx?$/.test(e.name)) into.push(path);
  }
  return into;
}

Deno.test("the patterns catch an untyped read (the check can fail)", () => {
  for (
    const bad of [
      'kv.get<KeyDoc>(projectionKey("key", [id]))',
      "s.kv.getMany<[number, UsageDoc]>([a, b])",
      'tx.projection<UsageDoc>("usage", ["p1"])',
    ]
  ) assert(UNTYPED.some((re) => re.test(bad)), bad);
  assert(!UNTYPED.some((re) => re.test("read(kvReads(kv), keysProjection, [id])")));
});

Deno.test("no projection document is read by string name or cast outside src/commands/read.ts", async () => {
  const offenders: string[] = [];
  for (const dir of DIRS) {
    for (const path of await files(dir)) {
      // read.ts holds the one cast.
      if (path === "src/commands/read.ts") continue;
      const lines = (await Deno.readTextFile(new URL(path, ROOT))).split("\n");
      lines.forEach((line, i) => {
        if (UNTYPED.some((re) => re.test(line))) offenders.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
  }
  assertEquals(offenders, []);
});
