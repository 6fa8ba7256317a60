/**
 * `deno task events:import --kv PATH [--in FILE] [--expect-head HASH]`: builds a fresh KV at PATH
 * from an NDJSON export (FILE or stdin). The hash chain is checked line by line; on the first
 * broken link, or a last hash other than the head the export printed (`--expect-head`), the import
 * is refused and PATH is removed again. Projections are re-derived
 * from the events, so the result is a KV the service can start on.
 */
import { cliArgs } from "./args.ts";
import { importEvents, ImportRefused, readLines } from "../audit/events-io.ts";
import { CliError, openFreshKv, removeKvFile, runCli } from "./kv.ts";

const USAGE = "usage: deno task events:import --kv PATH [--in FILE] [--expect-head HASH]";

await runCli(async () => {
  const parsed = cliArgs(USAGE, {
    kv: { type: "string" },
    in: { type: "string" },
    "expect-head": { type: "string" },
  });
  if (!parsed) return 0;
  const args = parsed.values;
  // No default: importing over the service's own DATA_DIR by accident must not be possible.
  if (!args.kv) throw new CliError(`--kv is required\n${USAGE}`);
  const input = args.in ? (await Deno.open(args.in)).readable : Deno.stdin.readable;
  const kv = await openFreshKv(args.kv);
  let ok = false;
  try {
    const { events, head } = await importEvents(readLines(input), kv, {
      expectHead: args["expect-head"],
    });
    ok = true;
    console.error(JSON.stringify({ imported: events, head, kv: args.kv }));
    return 0;
  } catch (e) {
    if (e instanceof ImportRefused) {
      console.error(`import refused: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    kv.close();
    if (!ok && !/^https?:/.test(args.kv)) await removeKvFile(args.kv);
  }
});
