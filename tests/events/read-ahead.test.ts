/** events/read-ahead.ts: the same items in the same order, bounded reading ahead, errors passed on. */
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { readAhead } from "../../events/read-ahead.ts";

function counted(n: number, failAt = -1) {
  const seen = { pulled: 0, closed: false };
  async function* source() {
    try {
      for (let i = 0; i < n; i++) {
        await Promise.resolve();
        if (i === failAt) throw new Error(`source failed at ${i}`);
        seen.pulled++;
        yield i;
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, source: source() };
}

Deno.test("read ahead: every item, in order", async () => {
  const { source } = counted(5_000);
  const out: number[] = [];
  for await (const x of readAhead(source, 100)) out.push(x);
  assertEquals(out, Array.from({ length: 5_000 }, (_, i) => i));
});

Deno.test("read ahead: breaking out stops the source, at most `max` read past", async () => {
  const { seen, source } = counted(100_000);
  let taken = 0;
  for await (const _ of readAhead(source, 50)) {
    if (++taken === 10) break;
  }
  assert(seen.closed, "the source was closed");
  assert(seen.pulled <= 10 + 50 + 1, `pulled ${seen.pulled}`);
});

Deno.test("read ahead: the source's failure reaches the reader", async () => {
  const { source } = counted(1_000, 300);
  let got = 0;
  await assertRejects(async () => {
    for await (const _ of readAhead(source, 64)) got++;
  });
  assertEquals(got, 300);
});
