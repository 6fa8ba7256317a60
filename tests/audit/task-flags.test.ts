/**
 * `deno task audit` is an operator's task: plain `deno run` permissions, no allocator or V8
 * tuning (the audit's memory bound holds without them, BENCHMARKS.md).
 */
import { assert, assertEquals } from "../support/assert.ts";

Deno.test("deno task audit runs with plain deno run permissions and no allocator or V8 flags", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  ) as { tasks: Record<string, string> };
  const task = config.tasks.audit;
  assert(!/v8-flags/.test(task), "deno task audit sets V8 flags");
  assert(!/MALLOC_|=\S+ deno/.test(task), "deno task audit sets an environment variable");
  assertEquals(
    task,
    "deno run --allow-read --allow-write --allow-env --allow-net --unstable-kv src/cli/audit.ts",
  );
});
