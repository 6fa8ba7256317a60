/**
 * The operator tools' command lines, read with node:util's `parseArgs` in one place: an unknown or
 * malformed option is a usage error (exit 2 with the usage, through `runCli`), and `--help` prints
 * the usage and answers null, for the tool to exit 0.
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { CliError } from "./kv.ts";

const HELP = { help: { type: "boolean" } } as const;

export function cliArgs<const O extends ParseArgsOptionsConfig, P extends boolean = false>(
  usage: string,
  options: O,
  allowPositionals?: P,
  args: string[] = Deno.args,
) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, ...HELP },
      allowPositionals: allowPositionals ?? false as P,
    });
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n${usage}`);
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    return null;
  }
  return parsed;
}
