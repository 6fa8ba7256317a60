/** The KV queue dispatcher: shutdown waits for jobs in flight and takes no new ones. */
import { assert, assertEquals } from "../support/assert.ts";
import { QueueDispatcher } from "../../src/queue.ts";

Deno.test("queue: stop() waits for the job in flight, then takes no new ones; a job can use the KV until then", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const handled: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const queue = new QueueDispatcher(kv, () => {}).on("job", async (m) => {
      handled.push(String(m.id));
      if (m.id === "first") {
        started();
        await gate;
        await kv.set(["done", "first"], true);
      }
    });
    queue.listen();
    await kv.enqueue({ kind: "job", id: "first" });
    await running;

    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 20));
    assert(!stopped, "stop() returned while a job was still running");
    release();
    await stopping;
    assertEquals((await kv.get(["done", "first"])).value, true);

    await kv.enqueue({ kind: "job", id: "late" });
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(handled, ["first"], "no job starts after stop()");
  } finally {
    kv.close();
  }
});
