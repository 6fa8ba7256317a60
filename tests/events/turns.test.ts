import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { Turns } from "../../events/turns.ts";

const tick = () => new Promise((r) => setTimeout(r, 1));

Deno.test("turns: calls with one key never overlap and keep their order; other keys run alongside", async () => {
  const turns = new Turns();
  const log: string[] = [];
  let inside = 0;
  let maxInside = 0;
  const job = (key: string, i: number) =>
    turns.run(key, async () => {
      inside += key === "a" ? 1 : 0;
      maxInside = Math.max(maxInside, inside);
      log.push(`${key}${i}<`);
      await tick();
      log.push(`${key}${i}>`);
      inside -= key === "a" ? 1 : 0;
      return i;
    });
  const results = await Promise.all([job("a", 1), job("b", 1), job("a", 2), job("a", 3)]);
  assertEquals(results, [1, 1, 2, 3]);
  assertEquals(maxInside, 1);
  const a = log.filter((l) => l.startsWith("a"));
  assertEquals(a, ["a1<", "a1>", "a2<", "a2>", "a3<", "a3>"]);
  // b started before a1 finished: different keys do not wait for each other.
  assert(log.indexOf("b1<") < log.indexOf("a1>"), log.join(" "));
  await tick();
  assertEquals(turns.size, 0);
});

Deno.test("turns: a failed call is its caller's error and does not block the next one", async () => {
  const turns = new Turns();
  const failed = turns.run("k", () => Promise.reject(new Error("boom")));
  const next = turns.run("k", () => Promise.resolve("ran"));
  await assertRejects(() => failed, Error, "boom");
  assertEquals(await next, "ran");
});
