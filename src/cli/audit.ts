/**
 * `deno task audit [--kv PATH] [--out DIR] [--from DIR] [--verify-chain]`: verifies the event
 * log's hash chain, rebuilds every projection and compares it with the live one, and writes the
 * reconciliation (builds, totals per key and per UTC day, purchases, exceptions) as CSV and
 * JSON. A clean audit also writes `checkpoint.json` and keeps its state (`state.sqlite3`) in
 * DIR; `--from` that DIR audits only what the log gained since (src/audit/checkpoint.ts), with
 * the same tables as a full audit. The state moves on to the new DIR (it is as large as the live
 * projections: copying it cost more than the audit); `--keep-from` copies it instead. Exit code 0: no exceptions; 1: exceptions (listed in
 * exceptions.csv); 2: usage error.
 */
import { cliArgs } from "./args.ts";
import type { Connection } from "@solana/web3.js";
import { runAudit } from "../audit/audit.ts";
import { rpcTxReader } from "../audit/chain-check.ts";
import { AUDIT_TABLES } from "../audit/audit.ts";
import { FileSink } from "../audit/sink.ts";
import { progressLine } from "../audit/progress.ts";
import { readCheckpoint, TooFarBehindError } from "../audit/checkpoint.ts";
import { MissingDocsError } from "../audit/doc-chunks.ts";
import { importEvents, ImportRefused, readLines } from "../audit/events-io.ts";
import { resolve } from "node:path";
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
  const kvPath = args.kv ?? defaultKvPath();
  const out = args.out ?? defaultAuditDir(Date.now());
  let connection: Connection | null = null;
  if (args["verify-chain"]) {
    // Loaded only when asked for: @solana/web3.js costs a second and ~60 MiB at start-up, which
    // an audit without --verify-chain never uses.
    const { Connection } = await import("@solana/web3.js");
    connection = new Connection(defaultRpcUrl(), {
      commitment: "confirmed",
      disableRetryOnRateLimit: false,
    });
  }

  let from = null;
  if (args.from) {
    try {
      from = await readCheckpoint(args.from);
    } catch (e) {
      throw new CliError(`--from ${args.from}: no usable checkpoint (${(e as Error).message})`);
    }
    if (resolve(args.from) === resolve(out)) throw new CliError("--from and --out must differ");
    try {
      await Deno.stat(`${args.from}/state.sqlite3`);
    } catch {
      throw new CliError(
        `--from ${args.from}: its state has moved on to a later audit (start from that one) or ` +
          `is gone; run a full audit`,
      );
    }
  }
  if (args.ndjson && args.kv) throw new CliError(`--kv and --ndjson exclude each other\n${USAGE}`);
  // An exported log (events:export) is imported into a throwaway KV (chain checked line by line,
  // projections re-derived) and audited there: the same tables as an audit of the service's KV.
  let imported: string | null = null;
  let kv: Deno.Kv;
  if (args.ndjson) {
    imported = await Deno.makeTempDir({ prefix: "tcb-audit-ndjson-" });
    kv = await Deno.openKv(`${imported}/kv.sqlite3`);
    try {
      await importEvents(readLines((await Deno.open(args.ndjson)).readable), kv, {
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
    kv = await openExistingKv(kvPath);
  }
  // What the audit rebuilds goes to its own state file in DIR (never to the audited KV); an
  // incremental audit works on a copy of the earlier audit's, which stays as it was.
  await Deno.mkdir(out, { recursive: true });
  const statePath = `${out}/state.sqlite3`;
  // The documents the state keeps are in a file beside it (doc-chunks.ts `ChunkFile`).
  const docsPath = `${out}/docs.bin`;
  for (const f of ["", "-wal", "-shm"]) await Deno.remove(statePath + f).catch(() => {});
  await Deno.remove(docsPath).catch(() => {});
  await Deno.remove(`${out}/checkpoint.json`).catch(() => {});
  if (from && args["keep-from"]) {
    await Deno.copyFile(`${args.from}/state.sqlite3`, statePath);
    await copyIfThere(`${args.from}/docs.bin`, docsPath);
  } else if (from) {
    // Moved, not copied; the earlier checkpoint cannot be started from again (it says so).
    for (const f of ["", "-wal", "-shm"]) {
      await Deno.rename(`${args.from}/state.sqlite3${f}`, statePath + f).catch((e) => {
        if (f === "" || !(e instanceof Deno.errors.NotFound)) throw e;
      });
    }
    await Deno.rename(`${args.from}/docs.bin`, docsPath).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  }
  const scratch = await Deno.openKv(statePath);
  let keepState = false;
  try {
    const sink = await FileSink.create(out, AUDIT_TABLES);
    let summary;
    try {
      summary = await runAudit({
        kv,
        scratch,
        sink,
        from,
        fromDir: args.from ?? null,
        tablesIndex: true,
        // A file (not a remote KV): the live pass can open it on the other core.
        kvPath: args.ndjson
          ? `${imported}/kv.sqlite3`
          : /^https?:\/\//.test(kvPath)
          ? null
          : kvPath,
        readTx: connection ? rpcTxReader(connection) : null,
        docsPath,
        statePath,
        onProgress: (p) => console.error(progressLine(p)),
      });
    } catch (e) {
      if (e instanceof TooFarBehindError) throw new CliError(e.message);
      if (e instanceof MissingDocsError) throw new CliError(`--from ${args.from}: ${e.message}`);
      throw e;
    }
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
    scratch.close();
    kv.close();
    if (imported) await Deno.remove(imported, { recursive: true }).catch(() => {});
    // Without a checkpoint the state is of no use to a later audit.
    if (!keepState) {
      for (const f of ["", "-wal", "-shm"]) await Deno.remove(statePath + f).catch(() => {});
      await Deno.remove(docsPath).catch(() => {});
    }
  }
});

/** A state written before the documents moved to their own file has none: nothing to copy. */
async function copyIfThere(from: string, to: string): Promise<void> {
  await Deno.copyFile(from, to).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
}
