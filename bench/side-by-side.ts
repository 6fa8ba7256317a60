/**
 * `deno task bench:side-by-side [--rev=c0e86df] [--rounds=300] [--bursts=5]`: the build path of
 * this tree and of an earlier commit in ONE process, interleaved, so a figure is a ratio that the
 * machine's other load moves for both sides alike (two separate bench runs on a shared 2-core
 * machine differ by more than the change being judged).
 *
 * The earlier commit is unpacked (`git archive`) into a temporary directory beside a deno.json
 * whose import map is both trees' together, and `lib/side-by-side-run.ts` starts each tree's own
 * bench harness (its service and its chain process) from there.
 */
import { parseArgs } from "node:util";

const args = parseArgs({
  args: Deno.args,
  options: {
    rev: { type: "string", default: "c0e86df" },
    rounds: { type: "string", default: "300" },
    bursts: { type: "string", default: "5" },
  },
}).values;
const here = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const tmp = await Deno.makeTempDir({ prefix: "side-by-side-" });
try {
  const base = `${tmp}/base`;
  await Deno.mkdir(base);
  await sh(["bash", "-c", `git -C "${here}" archive "${args.rev}" | tar -x -C "${base}"`]);
  const own = JSON.parse(await Deno.readTextFile(`${here}/deno.json`));
  const old = JSON.parse(await Deno.readTextFile(`${base}/deno.json`));
  await Deno.writeTextFile(
    `${tmp}/deno.json`,
    JSON.stringify({
      nodeModulesDir: "auto",
      imports: { ...old.imports, ...own.imports },
      allowScripts: own.allowScripts,
    }),
  );
  console.error(
    `side by side: ${args.rev} (A) against this tree (B); installing both trees' packages`,
  );
  await sh([Deno.execPath(), "install", "--quiet", "--config", `${tmp}/deno.json`], tmp);
  // Some files are read from node_modules by path (the docs page's bundle): the old tree's there.
  await Deno.symlink(`${tmp}/node_modules`, `${base}/node_modules`);
  await sh([
    Deno.execPath(),
    "run",
    "-A",
    "--unstable-kv",
    "--unstable-cron",
    "--no-lock",
    "--config",
    `${tmp}/deno.json`,
    `${here}/bench/lib/side-by-side-run.ts`,
    `--a=${base}`,
    `--b=${here}`,
    `--label-a=${args.rev}`,
    `--rounds=${args.rounds}`,
    `--bursts=${args.bursts}`,
  ], tmp);
} finally {
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
}

async function sh(cmd: string[], cwd = here) {
  const { code } = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited with ${code}`);
}
