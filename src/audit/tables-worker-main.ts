/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The worker side of tables-worker.ts: the builds in the packs from `from` on, read from the
 * state's file, as rows and exceptions in part files, with their totals; then it reports and is
 * terminated.
 */
import { deserialize } from "node:v8";
import { PROJECTIONS } from "../../events/keys.ts";
import { KvFile, type RawEntry, V8 } from "../../events/kv-file.ts";
import { encodeKvKey } from "../../events/kv-key-codec.ts";
import { bytesEqual } from "../kernel/bytes.ts";
import { BuildRows, BuildTotals, CountedExceptions } from "./build-table.ts";
import { AUDIT_BUILD, type AuditBuildDoc } from "./folds.ts";
import type { Pack } from "../../projections/packed.ts";
import { TablePart } from "./sink.ts";
import { BuildsIndex } from "./table-splice.ts";
import type { BuildsPart, BuildsPartRequest } from "./tables-worker.ts";
import { announceReady } from "./worker.ts";

/**
 * Packs read a page at a time: a page is one row of joined blobs (kv-file.ts `pages`), and 16
 * packs are about 1,000 builds, 0.7 MiB (a thousand packs were 40 MiB, twice over while joined).
 */
const PACKS_A_PAGE = 16;

/** The entries under `prefix` whose key is `start` or above, in key order. */
function* entriesFrom(file: KvFile, prefix: Uint8Array, start: Uint8Array): Generator<RawEntry> {
  const below = file.floor(prefix, start);
  if (below && bytesEqual(below.key, start)) yield below;
  for (const page of file.pages(prefix, PACKS_A_PAGE, below?.key ?? prefix)) yield* page;
}

async function run(req: BuildsPartRequest): Promise<void> {
  const file = KvFile.open(req.statePath);
  if (!file) throw new Error(`${req.statePath} is not a KV file this worker reads`);
  const parts: TablePart[] = [];
  try {
    const builds = await TablePart.create(req.dir, "builds", req.columns.builds);
    parts.push(builds);
    const exceptions = new CountedExceptions(
      await TablePart.create(req.dir, "exceptions", req.columns.exceptions),
    );
    parts.push(exceptions.part);
    const rows = new BuildRows(builds, new BuildTotals(), new BuildsIndex());
    const prefix = encodeKvKey([...PROJECTIONS, AUDIT_BUILD]);
    const start = encodeKvKey([...PROJECTIONS, AUDIT_BUILD, req.from]);
    for (const entry of entriesFrom(file, prefix, start)) {
      if (entry.encoding !== V8) throw new Error("a build in the state that is not a V8 value");
      for (const b of (deserialize(entry.value) as Pack<AuditBuildDoc>).docs) {
        await rows.write(b, null, exceptions.raise);
      }
    }
    parts.length = 0;
    const { totals, index } = rows;
    const done: BuildsPart = {
      builds: await builds.close(),
      exceptions: await exceptions.part.close(),
      byKind: exceptions.byKind,
      totals: {
        overall: totals.overall,
        byKey: totals.byKey,
        byDay: totals.byDay,
        firstBuild: totals.firstBuild,
        orphans: totals.orphans,
      },
      index: index
        ? {
          ids: index.ids.slice(0, index.n),
          csv: index.csv.slice(0, index.n),
          json: index.json.slice(0, index.n),
          flags: index.flags.slice(0, index.n),
          n: index.n,
        }
        : null,
    };
    self.postMessage({ type: "done", ...done });
  } finally {
    // Failed part way: its files are closed here, and the main thread removes them.
    for (const part of parts) await part.close().catch(() => {});
    file.close();
  }
}

self.onmessage = (m: MessageEvent<BuildsPartRequest>) => {
  run(m.data).catch((e) => self.postMessage({ type: "error", message: String(e?.stack ?? e) }));
};
announceReady();
