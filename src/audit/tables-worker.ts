/**
 * The full audit's builds table, its later builds written on the machine's other core. Once the
 * fold is done the audit only writes tables, and the builds table is most of that: read every
 * build from the state, make its rows, count its totals. The main thread writes the builds in the
 * packs before `from`; a worker reads those from `from` on straight from the state's file
 * (kv-file.ts) and writes their rows and exceptions to part files beside the tables, which the
 * main thread then appends (sink.ts `TablePart`, `FileSink.append`), with the worker's totals
 * added to its own (build-table.ts). The tables are byte for byte what one thread writes.
 */
import type { ExceptionKind } from "./build-table.ts";
import type { PartFiles } from "./sink.ts";
import type { TableTotals } from "./table-splice.ts";
import { askOnce } from "./worker.ts";

export interface BuildsPartRequest {
  /** The state KV's file. */
  statePath: string;
  /** Where the part files go (the audit's output directory). */
  dir: string;
  /** The first pack of the worker's share (builds are packed by id: folds.ts). */
  from: number;
  columns: { builds: string[]; exceptions: string[] };
}

/** Where each row starts in the part's files (`TablePart.next`); null when no index can be kept. */
export interface PartIndex {
  ids: Float64Array;
  csv: Float64Array;
  json: Float64Array;
  flags: Uint8Array;
  n: number;
}

export interface BuildsPart {
  builds: PartFiles;
  exceptions: PartFiles;
  byKind: Partial<Record<ExceptionKind, number>>;
  totals: TableTotals;
  index: PartIndex | null;
}

/** The worker's share; `signal` ends it early (the caller failed), its part files then left. */
export function buildsPartInWorker(
  req: BuildsPartRequest,
  signal?: AbortSignal,
): Promise<BuildsPart> {
  return askOnce<{ type: "done" } & BuildsPart>(
    new URL("./tables-worker-main.ts", import.meta.url),
    "builds table worker",
    req,
    signal,
  );
}

/** Removes the part files a worker for `dir` may have left (after a failure); none is fine. */
export async function removeParts(dir: string): Promise<void> {
  for (const table of ["builds", "exceptions"]) {
    for (const ext of ["csv", "json"]) {
      await Deno.remove(`${dir}/${table}.part.${ext}`).catch(() => {});
    }
  }
}
