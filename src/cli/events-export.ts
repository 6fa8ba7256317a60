/**
 * `deno task events:export [--kv PATH|URL] [--out FILE]`: the raw event log as NDJSON (one
 * stored event per line, in log order), to FILE or stdout. Streams; the log is read up to the
 * head seen at the start.
 */
import { cliArgs } from "./args.ts";
import { exportEvents } from "../audit/events-io.ts";
import { defaultKvPath, openExistingKv, runCli } from "./kv.ts";

const USAGE = "usage: deno task events:export [--kv PATH|URL] [--out FILE]";

await runCli(async () => {
  const parsed = cliArgs(USAGE, { kv: { type: "string" }, out: { type: "string" } });
  if (!parsed) return 0;
  const args = parsed.values;
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
