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

Deno.test("queue: a message delivered while stopping goes back on the queue for the next start instead of failing its handler", async () => {
  const path = await Deno.makeTempFile({ suffix: ".sqlite3" });
  try {
    const kv = await Deno.openKv(path);
    const handled: string[] = [];
    let handBack!: (kind: string) => void;
    const handedBack = new Promise<string>((r) => (handBack = r));
    const queue = new QueueDispatcher(kv, () => {}, handBack).on("job", (m) => {
      handled.push(String(m.id));
      return Promise.resolve();
    });
    queue.listen();
    await queue.stop();
    await kv.enqueue({ kind: "job", id: "during-stop" });
    // A generous bound, only so a regression fails instead of hanging.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const kind = await Promise.race([
      handedBack,
      new Promise((r) => (timer = setTimeout(() => r("not handed back in 30 s"), 30_000))),
    ]);
    clearTimeout(timer);
    assertEquals(kind, "job");
    kv.close();
    assertEquals(handled, [], "no job starts after stop()");

    // The next start of the process gets it (a new message, due a second after the hand-back).
    const next = await Deno.openKv(path);
    try {
      const got = new Promise<unknown>((r) => next.listenQueue(r));
      assertEquals(await got, { kind: "job", id: "during-stop" });
    } finally {
      next.close();
    }
  } finally {
    await Deno.remove(path);
  }
});
