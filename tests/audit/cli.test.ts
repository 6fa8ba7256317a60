/** The operator tasks as an operator runs them: `deno task …` in a subprocess, on KV files. */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { cleanWorkload, workload } from "./fixtures.ts";
import { runTask, withKvAt } from "../support/kv.ts";

Deno.test("deno task audit / events:export / events:import on KV files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-audit-cli-" });
  try {
    await withKvAt(`${dir}/clean.sqlite3`, cleanWorkload);
    await withKvAt(`${dir}/flagged.sqlite3`, workload);

    const clean = await runTask(
      "audit",
      "--kv",
      `${dir}/clean.sqlite3`,
      "--out",
      `${dir}/out-clean`,
    );
    assertEquals(clean.code, 0, clean.stderr);
    assertEquals(JSON.parse(clean.stdout).ok, true);
    // Progress on stderr: the replay with its passes, then the tables.
    assertMatch(clean.stderr, /audit: log and projections checked in \d+\.\d s \(last touches/);
    assertMatch(clean.stderr, /audit: tables written in \d+\.\d s/);

    const flagged = await runTask("audit", "--kv", `${dir}/flagged.sqlite3`, "--out", `${dir}/out`);
    assertEquals(flagged.code, 1, flagged.stderr);
    assertEquals(JSON.parse(flagged.stdout).exceptions.total, 3);
    const exceptions = await Deno.readTextFile(`${dir}/out/exceptions.csv`);
    assertEquals(exceptions.trim().split("\r\n").length, 1 + 3);

    const missing = await runTask("audit", "--kv", `${dir}/nope.sqlite3`);
    assertEquals(missing.code, 2);
    assertMatch(missing.stderr, /no KV at .*nope\.sqlite3/);

    const exp = await runTask(
      "events:export",
      "--kv",
      `${dir}/flagged.sqlite3`,
      "--out",
      `${dir}/log.ndjson`,
    );
    assertEquals(exp.code, 0, exp.stderr);
    const ndjson = await Deno.readTextFile(`${dir}/log.ndjson`);
    assertEquals(ndjson.trim().split("\n").length, 22);

    const imp = await runTask(
      "events:import",
      "--kv",
      `${dir}/copy.sqlite3`,
      "--in",
      `${dir}/log.ndjson`,
    );
    assertEquals(imp.code, 0, imp.stderr);
    assertEquals(JSON.parse(imp.stderr).imported, 22);
    const exportedHead = JSON.parse(exp.stderr).head.hash;
    assertEquals(JSON.parse(imp.stderr).head.hash, exportedHead);

    // Cut short, the file is still a valid chain: only the head the export printed tells.
    const cut = ndjson.trim().split("\n").slice(0, 20).join("\n") + "\n";
    await Deno.writeTextFile(`${dir}/cut.ndjson`, cut);
    const importCut = (kv: string, ...extra: string[]) =>
      runTask("events:import", "--in", `${dir}/cut.ndjson`, "--kv", `${dir}/${kv}`, ...extra);
    const unchecked = await importCut("cut1.sqlite3");
    assertEquals(unchecked.code, 0, unchecked.stderr);
    const checked = await importCut("cut2.sqlite3", "--expect-head", exportedHead);
    assertEquals(checked.code, 1);
    assertMatch(
      checked.stderr,
      /import refused: line 20: the last event's hash is [0-9a-f]{64}, not the expected head/,
    );
    const whole = await runTask(
      "events:import",
      "--in",
      `${dir}/log.ndjson`,
      "--kv",
      `${dir}/whole.sqlite3`,
      "--expect-head",
      exportedHead,
    );
    assertEquals(whole.code, 0, whole.stderr);
    const again = await runTask("audit", "--kv", `${dir}/copy.sqlite3`, "--out", `${dir}/out-copy`);
    assertEquals(again.code, 1);
    // Same history, same reconciliation.
    for (const t of ["builds", "totals_by_key", "totals_by_day", "purchases", "exceptions"]) {
      assertEquals(
        await Deno.readTextFile(`${dir}/out-copy/${t}.csv`),
        await Deno.readTextFile(`${dir}/out/${t}.csv`),
        t,
      );
    }

    const lines = ndjson.trim().split("\n");
    lines[8] = lines[8].replace(/"signature":"Sig\d+"/, '"signature":"Forged"');
    assert(lines.join("\n") !== ndjson.trim());
    await Deno.writeTextFile(`${dir}/tampered.ndjson`, lines.join("\n") + "\n");
    const refused = await runTask(
      "events:import",
      "--kv",
      `${dir}/new/deeper/t.sqlite3`,
      "--in",
      `${dir}/tampered.ndjson`,
    );
    assertEquals(refused.code, 1);
    assertMatch(refused.stderr, /import refused: line 9: hash does not match/);
    // Neither the file nor the directory the import made for it.
    await Deno.stat(`${dir}/new`).then(
      () => assert(false, "a refused import leaves no KV file or directory"),
      (e) => assert(e instanceof Deno.errors.NotFound),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
