/**
 * Two processes appending to one KV file (the service and `deno task admin --kv` on the same
 * DATA_DIR): SQLite answers one of them "database is locked" now and then, which the store must
 * take as a conflict and retry, never as a failed append.
 */
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { commitOrConflict } from "../../events/commit.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";

const WRITER = new URL("./support/append-writer.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("two processes appending to one KV file: every append lands, the chain holds", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-two-writers-" });
  const path = `${dir}/kv.sqlite3`;
  try {
    (await Deno.openKv(path)).close(); // the store exists before either writer opens it
    const writer = (prefix: string) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", "--config", CONFIG, WRITER, path, prefix, "400"],
        stdout: "piped",
        stderr: "piped",
      }).output();
    const outs = await Promise.all([writer("a"), writer("b")]);
    for (const out of outs) {
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      const r = JSON.parse(new TextDecoder().decode(out.stdout).trim());
      assertEquals(r, { ok: 400, firstError: null });
    }
    const kv = await Deno.openKv(path);
    try {
      const report = await replayAndCompare(kv, allProjections);
      assertEquals(report.chain.events, 800);
      assert(report.equal, JSON.stringify(report.chain.problems.slice(0, 3)));
    } finally {
      kv.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commitOrConflict answers SQLite's lock as a failed check and passes other errors on", async () => {
  const throwing = (message: string) =>
    ({ commit: () => Promise.reject(new TypeError(message)) }) as unknown as Deno.AtomicOperation;
  assertEquals(await commitOrConflict(throwing("database is locked")), { ok: false });
  await assertRejects(() => commitOrConflict(throwing("Value too large")), TypeError);
});
