import { assertEquals, assertRejects } from "../support/assert.ts";
import {
  currentWellKnownMatcher,
  currentWellKnownNames,
  editWellKnownNames,
  NamesError,
  normalizeNames,
  readWellKnownNames,
  resetWellKnownNames,
  setWellKnownNames,
} from "../../src/admin/well-known-names.ts";

async function withKv(fn: (kv: Deno.Kv) => Promise<void>) {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}

Deno.test("normalizeNames trims, drops look-alike duplicates and names every bad entry", async () => {
  // "USDС" ends in a Cyrillic С: the same name to a reader, so it is a duplicate.
  assertEquals(normalizeNames([" USDC", "usdc", "USD\u0421", "Solana"]), ["USDC", "Solana"]);
  const e = await assertRejects(
    () => Promise.resolve().then(() => normalizeNames(["", 3, "..."])),
    NamesError,
  );
  assertEquals((e as NamesError).problems, {
    "names.0": "must be 1 to 64 characters",
    "names.1": "must be a string",
    "names.2": "has no letters or digits to compare",
  });
});

Deno.test("a list past 30,000 characters in all is refused before KV's 64 KiB value limit", async () => {
  await withKv(async (kv) => {
    const s = { kv, config: { wellKnownNames: [] as string[] } };
    // Distinct names of 64 Hangul syllables (two bytes each as KV stores them; no two confusable).
    const cjk = (i: number) => String.fromCharCode(0xac00 + i).repeat(63) + "\uac00";
    const fits = Array.from({ length: 468 }, (_, i) => cjk(i)); // 29,952 characters
    assertEquals((await setWellKnownNames(s, fits)).names.length, 468);
    assertEquals((await currentWellKnownNames(s)).length, 468);
    const e = await assertRejects(
      () => editWellKnownNames(s, { add: [cjk(500)] }),
      NamesError,
    );
    assertEquals((e as NamesError).problems, {
      names: "at most 30000 characters in all (now 30016)",
    });
    // Far past it (85 KB as KV stores it): named as a bad list, never KV's own refusal.
    const more = Array.from({ length: 200 }, (_, i) => cjk(600 + i));
    await assertRejects(() => editWellKnownNames(s, { add: more }), NamesError);
    await assertRejects(() => setWellKnownNames(s, [...fits, ...more]), NamesError);
    // The list in force is unchanged.
    assertEquals((await currentWellKnownNames(s)).length, 468);
  });
});

Deno.test("the stored list overrides the configured one until reset; edits apply to the list in force", async () => {
  await withKv(async (kv) => {
    const s = { kv, config: { wellKnownNames: ["SOL", "USDC"] }, clock: () => 42 };
    assertEquals(await currentWellKnownNames(s), ["SOL", "USDC"]);
    assertEquals((await readWellKnownNames(s)).source, "config");
    // The first edit starts from the configured list.
    assertEquals((await editWellKnownNames(s, { add: ["BONK"], remove: ["usdc"] })).names, [
      "SOL",
      "BONK",
    ]);
    assertEquals(await readWellKnownNames(s), {
      names: ["SOL", "BONK"],
      source: "kv",
      updatedAt: 42,
    });
    await setWellKnownNames(s, ["Acme"]);
    assertEquals(await currentWellKnownNames(s), ["Acme"]);
    assertEquals((await resetWellKnownNames(s)).names, ["SOL", "USDC"]);
  });
});

Deno.test("concurrent edits both land", async () => {
  await withKv(async (kv) => {
    const s = { kv, config: { wellKnownNames: [] as string[] } };
    await Promise.all(
      ["A1", "B2", "C3", "D4", "E5"].map((n) => editWellKnownNames(s, { add: [n] })),
    );
    assertEquals((await currentWellKnownNames(s)).sort(), ["A1", "B2", "C3", "D4", "E5"]);
  });
});

Deno.test("currentWellKnownMatcher follows edits and folds look-alikes", async () => {
  await withKv(async (kv) => {
    const s = { kv, config: { wellKnownNames: ["Solana"] } };
    const m1 = await currentWellKnownMatcher(s);
    assertEquals(m1.match("S0LANA"), "Solana");
    assertEquals(await currentWellKnownMatcher(s), m1, "unchanged list: the same matcher");
    await setWellKnownNames(s, ["Acme"]);
    const m2 = await currentWellKnownMatcher(s);
    assertEquals(m2.match("Solana"), null);
    assertEquals(m2.match("ACME"), "Acme");
  });
});

Deno.test("listed names obey the text rules", () => {
  assertEquals(normalizeNames(["USDC", " Moon Cat "]), ["USDC", "Moon Cat"]);
  for (const bad of ["US\u202EDC", "A\u3164B", "Lone\ud800"]) {
    let problems: Record<string, string> = {};
    try {
      normalizeNames([bad]);
    } catch (e) {
      problems = (e as NamesError).problems;
    }
    assertEquals(Object.keys(problems), ["names.0"], JSON.stringify(bad));
  }
});
