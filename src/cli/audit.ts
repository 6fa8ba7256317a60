/**
 * `deno task audit [--kv PATH] [--out DIR] [--verify-chain]`: verifies the event log's hash
 * chain, rebuilds every projection and compares it with the live one, and writes the
 * reconciliation (builds, totals per key and per UTC day, purchases, exceptions) as CSV and
 * JSON. Exit code 0: no exceptions; 1: exceptions (listed in exceptions.csv); 2: usage error.
 */
import { parseArgs } from "node:util";
import { Connection } from "@solana/web3.js";
import { runAudit } from "../audit/audit.ts";
import { rpcTxReader } from "../audit/chain-check.ts";
import { AUDIT_TABLES } from "../audit/audit.ts";
import { FileSink } from "../audit/sink.ts";
import { CliError, defaultKvPath, defaultRpcUrl, openExistingKv, runCli } from "./kv.ts";

const USAGE = "usage: deno task audit [--kv PATH|URL] [--out DIR] [--verify-chain]";

await runCli(async () => {
  let args;
  try {
    args = parseArgs({
      args: Deno.args,
      options: {
        kv: { type: "string" },
        out: { type: "string" },
        "verify-chain": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }).values;
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n${USAGE}`);
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const kvPath = args.kv ?? defaultKvPath();
  const out = args.out ?? `audit-${new Date().toISOString().replaceAll(":", "").slice(0, 17)}Z`;
  let connection: Connection | null = null;
  if (args["verify-chain"]) {
    connection = new Connection(defaultRpcUrl(), {
      commitment: "confirmed",
      disableRetryOnRateLimit: false,
    });
  }

  const kv = await openExistingKv(kvPath);
  // The rebuilt projections spill to a throwaway file, not to memory and never to the audited KV.
  const scratchDir = await Deno.makeTempDir({ prefix: "tcb-audit-" });
  const scratch = await Deno.openKv(`${scratchDir}/scratch.sqlite3`);
  try {
    const sink = await FileSink.create(out, AUDIT_TABLES);
    const summary = await runAudit({
      kv,
      scratch,
      sink,
      readTx: connection ? rpcTxReader(connection) : null,
    });
    console.log(JSON.stringify({
      ok: summary.ok,
      events: summary.events,
      chainOk: summary.chain.ok,
      projectionMismatches: summary.projections.mismatches,
      builds: summary.builds.builds,
      exceptions: summary.exceptions,
      out,
    }));
    return summary.ok ? 0 : 1;
  } finally {
    scratch.close();
    kv.close();
    await Deno.remove(scratchDir, { recursive: true }).catch(() => {});
  }
});
