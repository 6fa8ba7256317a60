/** Batched KV writes (projections/commit-batches.ts): whatever the values weigh, all land. */
import { commitInBatches } from "../../src/audit/commit-batches.ts";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";

Deno.test("commitInBatches: a batch over the KV's commit size is split until it fits", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // 300 values of 30 KB: a batch of them is about nine times what one commit takes.
    const writes = Array.from({ length: 300 }, (_, i) => ({
      key: ["x", i],
      value: { s: `${i}`.repeat(30_000 / `${i}`.length) },
    }));
    await commitInBatches(kv, [...writes, { key: ["gone"], value: 1 }]);
    await commitInBatches(kv, [{ key: ["gone"], value: null }]);
    const stored = await Array.fromAsync(kv.list({ prefix: [] }));
    assertEquals(stored.map((e) => e.key), writes.map((w) => w.key));
    assertEquals(stored.map((e) => e.value), writes.map((w) => w.value));
  } finally {
    kv.close();
  }
});

Deno.test("commitInBatches: a value too large for the KV is still an error, naming its entry and size", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const error = await assertRejects(() =>
      commitInBatches(kv, [
        { key: ["a"], value: 1 },
        { key: ["p", "audit_build", 12], value: "y".repeat(70_000) },
      ])
    );
    const message = String((error as Error).message);
    assert(message.includes('["p","audit_build",12]'), message);
    assert(/\d{5} bytes, over the 65536/.test(message), message);
  } finally {
    kv.close();
  }
});
