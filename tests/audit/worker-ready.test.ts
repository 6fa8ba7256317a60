/**
 * The audit's workers (src/audit/worker.ts): a message sent as soon as the worker is spawned waits
 * until the worker says it is ready. Sent straight away, it would reach a module still awaiting at
 * top level, with no handler yet, and be lost: the audit then waited for an answer forever.
 */
import { spawnWorker } from "../../src/audit/worker.ts";
import { assertEquals } from "../support/assert.ts";

Deno.test("a message sent before a worker's module has loaded is delivered once it is ready", async () => {
  const w = spawnWorker<{ type: string; n: number }>(
    new URL("./support/slow-start-worker.ts", import.meta.url),
    "slow-start worker",
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const first = w.next();
    w.post({ n: 1 }); // at once: the worker is still awaiting at top level
    const answer = await Promise.race([
      first,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 20_000))),
    ]);
    assertEquals(answer, { type: "echo", n: 1 });
    const second = w.next();
    w.post({ n: 2 });
    assertEquals(await second, { type: "echo", n: 2 });
  } finally {
    clearTimeout(timer);
    w.end();
  }
});
