/**
 * Lines of code only the audit runs: the local import closure of `src/cli/audit.ts` (and of any
 * worker module a file in it starts), less the closure of the service (`src/main.ts`). Counts
 * non-blank lines outside comments.
 *
 *   deno run -A bench/audit-lines.ts [--files]
 */
const root = new URL("../", import.meta.url);

/** The local modules `entry` imports, directly or not, as file URLs. */
async function closure(entry: string): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(entry, root).href],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
  };
  return new Set(
    info.modules.map((m) => m.specifier).filter((s) =>
      s.startsWith(root.href) && !s.includes("/node_modules/")
    ),
  );
}

/** Adds the closure of every module a file of `set` names as `new URL("./x.ts", import.meta.url)`:
 * how a worker's entry is given to `new Worker`. */
async function withWorkers(set: Set<string>): Promise<Set<string>> {
  const seen = new Set(set);
  for (const file of [...seen]) {
    const text = await Deno.readTextFile(new URL(file));
    for (const m of text.matchAll(/new URL\(\s*["'](\.[^"']+\.ts)["']\s*,\s*import\.meta\.url/g)) {
      const worker = new URL(m[1], file).href;
      if (seen.has(worker)) continue;
      for (const f of await withWorkers(await closure(worker))) seen.add(f);
    }
  }
  return seen;
}

/** Non-blank lines that are not only comment. */
export function codeLines(text: string): number {
  let n = 0;
  let inBlock = false;
  for (const raw of text.split("\n")) {
    let line = raw.trim();
    if (inBlock) {
      const end = line.indexOf("*/");
      if (end < 0) continue;
      inBlock = false;
      line = line.slice(end + 2).trim();
    }
    while (line.startsWith("/*")) {
      const end = line.indexOf("*/", 2);
      if (end < 0) {
        inBlock = true;
        line = "";
        break;
      }
      line = line.slice(end + 2).trim();
    }
    if (line === "" || line.startsWith("//")) continue;
    n++;
  }
  return n;
}

if (import.meta.main) {
  const audit = await withWorkers(await closure("src/cli/audit.ts"));
  const service = await withWorkers(await closure("src/main.ts"));
  const only = [...audit].filter((f) => !service.has(f)).sort();
  const shared = [...audit].filter((f) => service.has(f));
  let total = 0;
  let sharedLines = 0;
  for (const f of only) {
    const n = codeLines(await Deno.readTextFile(new URL(f)));
    total += n;
    if (Deno.args.includes("--files")) {
      console.log(`${String(n).padStart(6)} ${f.slice(root.href.length)}`);
    }
  }
  for (const f of shared) sharedLines += codeLines(await Deno.readTextFile(new URL(f)));
  console.log(
    JSON.stringify({
      auditOnlyLines: total,
      auditOnlyFiles: only.length,
      sharedLines,
      sharedFiles: shared.length,
    }),
  );
}
