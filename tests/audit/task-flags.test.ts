/**
 * The V8 flags the audit runs with are part of its memory and time figures (docs/operations.md,
 * BENCHMARKS.md): the task and the benchmark that measures it must run it the same way.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { AUDIT_MMAP_THRESHOLD, AUDIT_V8_FLAGS } from "../../bench/sections/events.ts";

const auditTask = async (): Promise<string> => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  ) as { tasks: Record<string, string> };
  return config.tasks.audit;
};

const taskFlags = async (): Promise<string[]> => {
  const flags = /--v8-flags=(\S+)/.exec(await auditTask())?.[1];
  assert(flags, "deno task audit sets no V8 flags");
  return flags.split(",");
};

Deno.test("deno task audit keeps its heap small and V8's pretenuring off, as the benchmark runs it", async () => {
  const flags = await taskFlags();
  for (
    const f of [
      "--max-old-space-size=128",
      "--max-semi-space-size=4",
      // Pretenured documents filled the old generation with garbage: 2.5x the full collections.
      "--no-allocation-site-pretenuring",
    ]
  ) assert(flags.includes(f), `deno task audit runs without ${f}`);
  assertEquals(flags, AUDIT_V8_FLAGS.split(","));
});

Deno.test("deno task audit sets glibc's mmap threshold as the benchmark does", async () => {
  const threshold = /^MALLOC_MMAP_THRESHOLD_=(\d+) /.exec(await auditTask())?.[1];
  assert(threshold, "deno task audit does not set MALLOC_MMAP_THRESHOLD_");
  assertEquals(threshold, AUDIT_MMAP_THRESHOLD);
  // Over the live pass's page buffers (about a MiB each), or each is mapped, faulted in and
  // unmapped again; low enough that freed buffers do not pile up in the heap.
  assert(Number(threshold) >= 2 ** 21 && Number(threshold) <= 2 ** 24);
});
