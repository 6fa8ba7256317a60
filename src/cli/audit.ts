/**
 * `deno task audit [--kv PATH|URL | --ndjson FILE [--expect-head HASH]] [--out DIR]
 * [--from DIR [--keep-from]] [--verify-chain]`: verifies the event log's hash chain, rebuilds every
 * projection and compares it with the live one, and writes the reconciliation (builds, totals per
 * key and per UTC day, purchases, exceptions) as CSV and JSON in DIR (docs/operations.md). A clean
 * audit also writes `checkpoint.json` and keeps its state (`state.sqlite3`) in DIR; `--from` that
 * DIR audits only what the log gained since, with the same tables as a full audit. The state moves
 * on to the new DIR; `--keep-from` copies it instead. Exit code 0: no exceptions; 1: exceptions
 * (listed in exceptions.csv); 2: usage error.
 */
import { resolve } from "node:path";
import type { Connection } from "@solana/web3.js";
import { cliArgs } from "./args.ts";
import { AUDIT_TABLES, runAudit } from "../audit/audit.ts";
import { rpcTxReader } from "../audit/chain-check.ts";
import { importEvents, ImportRefused, readLines } from "../audit/events-io.ts";
import { progressLine } from "../audit/progress.ts";
import { FileSink } from "../audit/sink.ts";
import { type Checkpoint, readCheckpoint, TooFarBehindError } from "../audit/state.ts";
import {
  CliError,
  defaultAuditDir,
  defaultKvPath,
  defaultRpcUrl,
  openExistingKv,
  runCli,
} from "./kv.ts";

const USAGE = "usage: deno task audit [--kv PATH|URL | --ndjson FILE [--expect-head HASH]] " +
  "[--out DIR] [--from DIR-OF-AN-EARLIER-AUDIT [--keep-from]] [--verify-chain]";

const STATE = "state.sqlite3";
const removeState = async (dir: string) => {
  for (const f of ["", "-wal", "-shm"]) await Deno.remove(`${dir}/${STATE}${f}`).catch(() => {});
};

await runCli(async () => {
  const parsed = cliArgs(USAGE, {
    kv: { type: "string" },
    out: { type: "string" },
    from: { type: "string" },
    "keep-from": { type: "boolean", default: false },
    ndjson: { type: "string" },
    "expect-head": { type: "string" },
    "verify-chain": { type: "boolean", default: false },
  });
  if (!parsed) return 0;
  const args = parsed.values;
  if (args.ndjson && args.kv) throw new CliError(`--kv and --ndjson exclude each other\n${USAGE}`);
  const out = args.out ?? defaultAuditDir(Date.now());
  const from = args.from ? await checkpointIn(args.from, out) : null;

  let connection: Connection | null = null;
  if (args["verify-chain"]) {
    // Loaded only when asked for: an audit without --verify-chain never uses @solana/web3.js.
    const { Connection } = await import("@solana/web3.js");
    connection = new Connection(defaultRpcUrl(), { commitment: "confirmed" });
  }

  // An exported log (events:export) is imported into a throwaway KV (chain checked line by line,
  // projections derived) and audited there: the same tables as an audit of the service's KV.
  const imported = args.ndjson ? await Deno.makeTempDir({ prefix: "tcb-audit-ndjson-" }) : null;
  let kv: Deno.Kv;
  if (imported) {
    kv = await Deno.openKv(`${imported}/kv.sqlite3`);
    try {
      await importEvents(readLines((await Deno.open(args.ndjson!)).readable), kv, {
        expectHead: args["expect-head"],
      });
    } catch (e) {
      kv.close();
      await Deno.remove(imported, { recursive: true }).catch(() => {});
      if (!(e instanceof ImportRefused)) throw e;
      // A broken chain in the file: the audit's finding, exit 1 like any other exception.
      console.error(`--ndjson refused: ${e.message}`);
      return 1;
    }
  } else {
    kv = await openExistingKv(args.kv ?? defaultKvPath());
  }

  // The audit's state is a KV of its own in DIR, never the audited one; an incremental audit
  // starts from the earlier audit's, moved (or, with --keep-from, copied) here.
  await Deno.mkdir(out, { recursive: true });
  await removeState(out);
  await Deno.remove(`${out}/checkpoint.json`).catch(() => {});
  if (from && args["keep-from"]) await Deno.copyFile(`${args.from}/${STATE}`, `${out}/${STATE}`);
  else if (from) await Deno.rename(`${args.from}/${STATE}`, `${out}/${STATE}`);
  const state = await Deno.openKv(`${out}/${STATE}`);
  let keepState = false;
  try {
    const sink = await FileSink.create(out, AUDIT_TABLES);
    const summary = await runAudit({
      kv,
      scratch: state,
      sink,
      from,
      readTx: connection ? rpcTxReader(connection) : null,
      onProgress: (p) => console.error(progressLine(p)),
    }).catch((e) => {
      throw e instanceof TooFarBehindError ? new CliError(e.message) : e;
    });
    if (summary.checkpoint) {
      await Deno.writeTextFile(
        `${out}/checkpoint.json`,
        JSON.stringify(summary.checkpoint, null, 2) + "\n",
      );
      keepState = true;
    }
    console.log(JSON.stringify({
      ok: summary.ok,
      events: summary.events,
      from: summary.from?.position ?? null,
      chainOk: summary.chain.ok,
      projectionMismatches: summary.projections.mismatches,
      builds: summary.builds.builds,
      exceptions: summary.exceptions,
      checkpoint: summary.checkpoint ? `${out}/checkpoint.json` : null,
      out,
    }));
    return summary.ok ? 0 : 1;
  } finally {
    state.close();
    kv.close();
    if (imported) await Deno.remove(imported, { recursive: true }).catch(() => {});
    // Without a checkpoint the state is of no use to a later audit.
    if (!keepState) await removeState(out);
  }
});

/** The checkpoint in `dir`, with its state still there; a usage error otherwise. */
async function checkpointIn(dir: string, out: string): Promise<Checkpoint> {
  if (resolve(dir) === resolve(out)) throw new CliError("--from and --out must differ");
  let cp: Checkpoint;
  try {
    cp = await readCheckpoint(dir);
  } catch (e) {
    throw new CliError(`--from ${dir}: no usable checkpoint (${(e as Error).message})`);
  }
  try {
    await Deno.stat(`${dir}/${STATE}`);
  } catch {
    throw new CliError(
      `--from ${dir}: its state has moved on to a later audit (start from that one) or is gone; ` +
        `run a full audit`,
    );
  }
  return cp;
}
