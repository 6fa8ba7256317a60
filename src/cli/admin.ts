/** `deno task admin …`: operator commands; see ADMIN_USAGE in src/admin/ops.ts. */
import { cliArgs } from "./args.ts";
import {
  ADMIN_USAGE,
  type AdminOps,
  httpOps,
  kvOps,
  runAdminCommand,
  UsageError,
} from "../admin/ops.ts";
import { NamesError } from "../admin/well-known-names.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { ApiError } from "../kernel/errors.ts";
import { CliError, defaultKvPath, openExistingKv, runCli } from "./kv.ts";

await runCli(async () => {
  const parsed = cliArgs(ADMIN_USAGE, {
    kv: { type: "string" },
    url: { type: "string" },
    status: { type: "string" },
    wallet: { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
    reason: { type: "string" },
  }, true);
  if (!parsed) return 0;
  const { values: v, positionals } = parsed;
  if (positionals.length === 0) {
    console.log(ADMIN_USAGE);
    return 2;
  }
  if (v.kv && v.url) throw new CliError("use either --kv or --url, not both");

  let ops: AdminOps;
  let kv: Deno.Kv | null = null;
  if (v.url) {
    const token = Deno.env.get("ADMIN_TOKEN");
    if (!token) throw new CliError("--url needs ADMIN_TOKEN in the environment");
    ops = httpOps(v.url, token);
  } else {
    // Only the list default matters here; the rest of the service's configuration does not.
    let wellKnownNames;
    try {
      wellKnownNames = loadConfig({ WELL_KNOWN_NAMES: Deno.env.get("WELL_KNOWN_NAMES") })
        .wellKnownNames;
    } catch (e) {
      if (e instanceof ConfigError) throw new CliError(e.message);
      throw e;
    }
    kv = await openExistingKv(v.kv ?? defaultKvPath());
    ops = kvOps(kv, { wellKnownNames });
  }
  try {
    const out = await runAdminCommand(ops, positionals, v);
    console.log(JSON.stringify(out, null, 2));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) throw new CliError(`${e.message}\n${ADMIN_USAGE}`);
    if (e instanceof NamesError) throw new CliError(e.message);
    if (e instanceof ApiError) {
      console.error(JSON.stringify(e.body()));
      return 1;
    }
    throw e;
  } finally {
    kv?.close();
  }
});
