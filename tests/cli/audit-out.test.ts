/** `deno task audit` without --out writes under DATA_DIR, never into the working directory. */
import { assert, assertEquals } from "../support/assert.ts";
import { defaultAuditDir } from "../../src/cli/kv.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("the default audit directory is DATA_DIR/audits/audit-<UTC moment>Z", () => {
  const at = Date.UTC(2026, 10, 25, 1, 2, 3, 456);
  assertEquals(defaultAuditDir(at, {}), ".data/audits/audit-2026-11-25T010203Z");
  assertEquals(
    defaultAuditDir(at, { DATA_DIR: "/srv/tcb/" }),
    "/srv/tcb/audits/audit-2026-11-25T010203Z",
  );
});

Deno.test("deno task audit with no --out: the reconciliation lands in DATA_DIR/audits", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-audit-out-" });
  const kv = await Deno.openKv(`${dataDir}/kv.sqlite3`);
  kv.close();
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "audit"],
      cwd: ROOT,
      env: { NO_COLOR: "1", DATA_DIR: dataDir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assertEquals(run.code, 0, stderr);
    const out: string = JSON.parse(new TextDecoder().decode(run.stdout)).out;
    assert(out.startsWith(`${dataDir}/audits/audit-`), out);
    assert((await Deno.stat(`${out}/summary.json`)).isFile, `${out}/summary.json`);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
