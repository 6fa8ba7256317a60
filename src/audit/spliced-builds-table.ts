/**
 * An incremental audit's builds table: the earlier audit's, with the rows of the builds the new
 * events changed replaced or added (table-splice.ts copies and splices the files), the totals
 * moved by the same builds, and every build with exceptions raising them again in build order, as
 * a full pass does. Splicing instead of writing the table again is what keeps an incremental audit
 * short (table-splice.ts says by how much). Anything that does not fit leaves the table to be
 * written in full (full-builds-table.ts).
 */
import { buildRow, BuildTotals, type Raise, raiseBuildExceptions } from "./build-table.ts";
import type { AuditBuildDoc } from "./folds.ts";
import { csvRow, type FileSink } from "./sink.ts";
import {
  type BuildsIndex,
  spliceBuilds,
  type SplicedRow,
  type SplicePrep,
} from "./table-splice.ts";

/** A build the new events changed: its document before them (null: new) and after (null: gone). */
export interface ChangedBuild {
  before: AuditBuildDoc | null;
  after: AuditBuildDoc | null;
}

export interface BuildsSplice {
  /** The earlier audit's directory. */
  fromDir: string;
  /** What was read from it beside the replay (`prepareSplice`). */
  prior: SplicePrep;
  changed: ChangedBuild[];
  sink: FileSink;
  /** The builds table's columns. */
  columns: string[];
  raise: Raise;
}

/**
 * Splices the builds table; null, having written nothing, when something does not fit: a build
 * the events deleted or gave an id that is not a number, one now counted under another key or
 * day (the full pass orders those), or a flagged build the state no longer holds.
 */
export async function spliceBuildsTable(
  s: BuildsSplice,
): Promise<{ index: BuildsIndex; totals: BuildTotals } | null> {
  const { changed, prior } = s;
  for (const { before, after } of changed) {
    if (!after || typeof after.buildId !== "number" || !Number.isFinite(after.buildId)) {
      return null;
    }
    // A build counted under another key or day than before: the full pass orders those.
    if (
      before?.hasBuild &&
      (!after.hasBuild || after.keyId !== before.keyId || after.day !== before.day)
    ) return null;
  }
  // The builds with exceptions that the new events left as they were (read beside the replay).
  const changedIds = new Set(changed.map((c) => c.after!.buildId));
  const flaggedDocs = [...prior.flagged].filter(([id]) => !changedIds.has(id))
    .map(([, doc]) => doc as AuditBuildDoc | null);
  if (flaggedDocs.some((d) => d === null)) return null;

  const totals = BuildTotals.of(prior.totals);
  for (const { before, after } of changed) {
    if (before) totals.count(before, -1);
    totals.count(after!);
  }
  const { firstBuild } = totals;
  totals.byKey = new Map(
    [...totals.byKey].sort((a, b) => firstBuild.get(a[0])! - firstBuild.get(b[0])!),
  );
  // Every build with exceptions raises them again, in build order, as the full pass does.
  const all = [
    ...flaggedDocs.map((doc) => ({ doc: doc!, changed: false })),
    ...changed.map((c) => ({ doc: c.after!, changed: true })),
  ].sort((a, b) => a.doc.buildId - b.doc.buildId);
  const rows: SplicedRow[] = [];
  for (const { doc, changed } of all) {
    const raised = await raiseBuildExceptions(doc, null, s.raise);
    if (!changed) continue;
    const row = buildRow(doc, null);
    rows.push({
      id: doc.buildId,
      csv: csvRow(s.columns, row),
      json: JSON.stringify(row),
      flag: raised > 0,
    });
  }
  const index = await spliceBuilds(
    s.fromDir,
    prior.index,
    await s.sink.detach("builds"),
    rows,
    prior.copies,
  );
  return { index, totals };
}
