/**
 * `deno task events:export [--kv PATH|URL] [--out FILE]`: the raw event log as NDJSON (one
 * stored event per line, in log order), to FILE or stdout. Streams; the log is read up to the
 * head seen at the start.
 */
import { parseArgs } from "node:util";
import { exportEvents } from "../audit/events-io.ts";
import { CliError, defaultKvPath, openExistingKv, runCli } from "./kv.ts";

const USAGE = "usage: deno task events:export [--kv PATH|URL] [--out FILE]";

await runCli(async () => {
  let args;
  try {
    args = parseArgs({
      args: Deno.args,
      options: { kv: { type: "string" }, out: { type: "string" }, help: { type: "boolean" } },
    }).values;
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n${USAGE}`);
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const kv = await openExistingKv(args.kv ?? defaultKvPath());
  const file = args.out
    ? await Deno.open(args.out, { write: true, create: true, truncate: true })
    : null;
  const writer = (file?.writable ?? Deno.stdout.writable).getWriter();
  const enc = new TextEncoder();
  try {
    const { events, head } = await exportEvents(kv, (chunk) => writer.write(enc.encode(chunk)));
    console.error(JSON.stringify({ events, head }));
    return 0;
  } finally {
    await writer.close().catch(() => {});
    kv.close();
  }
});
