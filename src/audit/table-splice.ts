/**
 * The builds table of an incremental audit, spliced from the earlier audit's instead of written
 * again: at a million events it is 264k rows and ~240 MB of CSV and JSON, and writing it was most
 * of an incremental audit's time, though the events after a checkpoint change only a few
 * thousand rows.
 *
 * An audit that writes a checkpoint also writes, beside its tables, where each row of
 * builds.csv and builds.json starts (`builds.index`: build ids and byte offsets, and whether the
 * row raised exceptions) and the totals those rows add up to (`tables-index.json`: per key, per
 * day, overall; exact integers). The next incremental audit then
 * - copies the files up to the first row that changed (one `copyFile` and a truncate: the
 *   kernel copies, nothing passes through JavaScript), and from there writes the changed and new
 *   rows, in build id order, by the same code as a full audit, and copies the unchanged runs
 *   between them byte for byte;
 * - takes each changed build's old row out of the totals and puts its new one in;
 * - writes the exceptions of every build that has any again, from its document.
 * The result is byte for byte what a full audit writes (tests/audit/table-splice.test.ts). When
 * anything does not fit (no index, another checkpoint, files of another size, `--verify-chain`,
 * a build that moved to another key or day), the audit writes the tables in full instead.
 *
 * No library splices files: Deno has no ranged copy (copy_file_range) in its API, so the copy
 * from a row on is a plain read and write, and everything before it one `Deno.copyFile`.
 */
import { type Totals, totalsFromJson, type TotalsJson, totalsToJson } from "./totals.ts";

export const BUILDS_INDEX = "builds.index";
export const TABLES_INDEX = "tables-index.json";
const VERSION = 1;

/** The totals of the builds table and what ties them to their audit. */
export interface TablesMeta {
  version: number;
  /** The checkpoint written with the tables. */
  checkpoint: { position: number; hash: string };
  rows: number;
  csvBytes: number;
  jsonBytes: number;
  overall: TotalsJson;
  /** Per key, in the order of each key's first build (unknown keys are listed in that order). */
  byKey: [keyId: string, totals: TotalsJson, firstBuild: number][];
  byDay: [day: string, totals: TotalsJson][];
  orphans: number;
}

/** Where each builds row starts in the CSV and the JSON file, in build id order. */
export class BuildsIndex {
  ids: Float64Array;
  csv: Float64Array;
  json: Float64Array;
  flags: Uint8Array;
  n = 0;

  constructor(capacity = 1024) {
    this.ids = new Float64Array(capacity);
    this.csv = new Float64Array(capacity + 1);
    this.json = new Float64Array(capacity + 1);
    this.flags = new Uint8Array(capacity);
  }

  #grow(): void {
    const cap = this.ids.length * 2;
    const grow = <T extends Float64Array | Uint8Array>(a: T, len: number): T => {
      const b = new (a.constructor as new (n: number) => T)(len);
      b.set(a);
      return b;
    };
    this.ids = grow(this.ids, cap);
    this.csv = grow(this.csv, cap + 1);
    this.json = grow(this.json, cap + 1);
    this.flags = grow(this.flags, cap);
  }

  /** A row: its build id, where its CSV line and its JSON object start, and whether it raised exceptions. */
  add(id: number, csv: number, json: number, flag: boolean): void {
    if (this.n === this.ids.length) this.#grow();
    this.ids[this.n] = id;
    this.csv[this.n] = csv;
    this.json[this.n] = json;
    this.flags[this.n] = flag ? 1 : 0;
    this.n++;
  }

  /**
   * Closes the index with the files' sizes: a row ends where the next starts (in the JSON, two
   * bytes before: the ",\n" between objects); the last one at the end of the CSV and before the
   * JSON's "\n]\n".
   */
  end(csvBytes: number, jsonBytes: number): void {
    this.csv[this.n] = csvBytes;
    this.json[this.n] = jsonBytes - 1;
  }

  /** The row of build `id`, or -(insertion point) - 1 when there is none. */
  find(id: number): number {
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.ids[mid];
      if (v === id) return mid;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -lo - 1;
  }

  toBytes(): Uint8Array {
    const n = this.n;
    const out = new Float64Array(2 + n + 2 * (n + 1) + n);
    out[0] = VERSION;
    out[1] = n;
    out.set(this.ids.subarray(0, n), 2);
    out.set(this.csv.subarray(0, n + 1), 2 + n);
    out.set(this.json.subarray(0, n + 1), 3 + 2 * n);
    for (let i = 0; i < n; i++) out[4 + 3 * n + i] = this.flags[i];
    return new Uint8Array(out.buffer);
  }

  static fromBytes(bytes: Uint8Array): BuildsIndex | null {
    if (bytes.byteLength < 16 || bytes.byteLength % 8 !== 0) return null;
    const a = new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
    const n = a[1];
    if (a[0] !== VERSION || !Number.isInteger(n) || a.length !== 4 + 4 * n) return null;
    const index = new BuildsIndex(Math.max(1, n));
    index.ids.set(a.subarray(2, 2 + n));
    index.csv.set(a.subarray(2 + n, 3 + 2 * n));
    index.json.set(a.subarray(3 + 2 * n, 4 + 3 * n));
    for (let i = 0; i < n; i++) index.flags[i] = a[4 + 3 * n + i];
    index.n = n;
    return index;
  }
}

export interface TableTotals {
  overall: Totals;
  byKey: Map<string, Totals>;
  firstBuild: Map<string, number>;
  byDay: Map<string, Totals>;
  orphans: number;
}

/** Writes the index and totals beside the tables in `dir` (after the sink closed them). */
export async function saveTablesIndex(
  dir: string,
  index: BuildsIndex,
  totals: TableTotals,
  checkpoint: { position: number; hash: string },
): Promise<void> {
  const csvBytes = (await Deno.stat(`${dir}/builds.csv`)).size;
  const jsonBytes = (await Deno.stat(`${dir}/builds.json`)).size;
  index.end(csvBytes, jsonBytes);
  const meta: TablesMeta = {
    version: VERSION,
    checkpoint: { position: checkpoint.position, hash: checkpoint.hash },
    rows: index.n,
    csvBytes,
    jsonBytes,
    overall: totalsToJson(totals.overall),
    byKey: [...totals.byKey].map(([k, t]) => [k, totalsToJson(t), totals.firstBuild.get(k)!]),
    byDay: [...totals.byDay].map(([d, t]) => [d, totalsToJson(t)]),
    orphans: totals.orphans,
  };
  await Deno.writeFile(`${dir}/${BUILDS_INDEX}`, index.toBytes());
  await Deno.writeTextFile(`${dir}/${TABLES_INDEX}`, JSON.stringify(meta) + "\n");
}

/**
 * The earlier audit's index and totals, when they belong to `checkpoint` and its tables are the
 * size they were written at; null otherwise (the audit then writes its tables in full).
 */
export async function loadTablesIndex(
  dir: string,
  checkpoint: { position: number; hash: string },
): Promise<{ index: BuildsIndex; totals: TableTotals } | null> {
  try {
    const meta = JSON.parse(await Deno.readTextFile(`${dir}/${TABLES_INDEX}`)) as TablesMeta;
    if (
      meta.version !== VERSION || meta.checkpoint.position !== checkpoint.position ||
      meta.checkpoint.hash !== checkpoint.hash
    ) return null;
    if ((await Deno.stat(`${dir}/builds.csv`)).size !== meta.csvBytes) return null;
    if ((await Deno.stat(`${dir}/builds.json`)).size !== meta.jsonBytes) return null;
    const index = BuildsIndex.fromBytes(await Deno.readFile(`${dir}/${BUILDS_INDEX}`));
    if (!index || index.n !== meta.rows) return null;
    if (index.csv[index.n] !== meta.csvBytes || index.json[index.n] !== meta.jsonBytes - 1) {
      return null;
    }
    return {
      index,
      totals: {
        overall: totalsFromJson(meta.overall),
        byKey: new Map(meta.byKey.map(([k, t]) => [k, totalsFromJson(t)])),
        firstBuild: new Map(meta.byKey.map(([k, , first]) => [k, first])),
        byDay: new Map(meta.byDay.map(([d, t]) => [d, totalsFromJson(t)])),
        orphans: meta.orphans,
      },
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof SyntaxError) return null;
    throw e;
  }
}

/** What a splice needs from the earlier audit, gathered while the replay runs. */
export interface SplicePrep {
  index: BuildsIndex;
  totals: TableTotals;
  /** The documents of the builds whose rows raised exceptions, by id (they raise them again). */
  flagged: Map<number, unknown>;
  /** The earlier builds.csv and builds.json, already copied beside the new ones. */
  copies: { csv: string; json: string };
}

/**
 * Loads the earlier audit's index (null: it does not fit, see `loadTablesIndex`), reads the
 * documents of its builds with exceptions from `state`, and copies its builds files to
 * `outDir` (the kernel copies; the splice cuts them later). Runs beside the replay: the builds
 * it reads that the new events change are read again after them by the caller.
 */
export async function prepareSplice(
  fromDir: string,
  checkpoint: { position: number; hash: string },
  outDir: string,
  read: (ids: number[]) => Promise<(unknown | null)[]>,
): Promise<SplicePrep | null> {
  const prior = await loadTablesIndex(fromDir, checkpoint);
  if (!prior) return null;
  const copies = { csv: `${outDir}/builds.csv.part`, json: `${outDir}/builds.json.part` };
  const copying = Promise.all([
    Deno.copyFile(`${fromDir}/builds.csv`, copies.csv),
    Deno.copyFile(`${fromDir}/builds.json`, copies.json),
  ]);
  copying.catch(() => {}); // awaited below
  const ids: number[] = [];
  for (let i = 0; i < prior.index.n; i++) if (prior.index.flags[i]) ids.push(prior.index.ids[i]);
  const docs = await read(ids);
  await copying;
  const flagged = new Map<number, unknown>();
  ids.forEach((id, i) => flagged.set(id, docs[i]));
  return { ...prior, flagged, copies };
}

/** Removes the copies of a preparation not used. */
export async function discardSplicePrep(prep: SplicePrep | null): Promise<void> {
  if (!prep) return;
  for (const f of [prep.copies.csv, prep.copies.json]) await Deno.remove(f).catch(() => {});
}

/** A changed or new row of the builds table, rendered as the sink renders rows. */
export interface SplicedRow {
  id: number;
  csv: string;
  json: string;
  flag: boolean;
}

const enc = new TextEncoder();

/** Appends to a file in large writes, counting the bytes. */
class Appender {
  #parts: Uint8Array[] = [];
  #size = 0;
  offset: number;

  constructor(readonly file: Deno.FsFile, start: number) {
    this.offset = start;
  }

  async bytes(b: Uint8Array): Promise<void> {
    this.#parts.push(b);
    this.#size += b.length;
    this.offset += b.length;
    if (this.#size >= 1 << 20) await this.flush();
  }

  text(s: string): Promise<void> {
    return this.bytes(enc.encode(s));
  }

  /** Bytes `[start, end)` of `src`, copied a megabyte at a time. */
  async copy(src: Deno.FsFile, start: number, end: number): Promise<void> {
    await src.seek(start, Deno.SeekMode.Start);
    let left = end - start;
    while (left > 0) {
      const buf = new Uint8Array(Math.min(left, 1 << 20));
      let got = 0;
      while (got < buf.length) {
        const n = await src.read(buf.subarray(got));
        if (n === null) throw new Error("the earlier audit's table is shorter than its index");
        got += n;
      }
      await this.bytes(buf);
      left -= buf.length;
    }
  }

  async flush(): Promise<void> {
    for (const p of this.#parts) {
      let off = 0;
      while (off < p.length) off += await this.file.write(p.subarray(off));
    }
    this.#parts = [];
    this.#size = 0;
  }
}

/**
 * Writes builds.csv and builds.json to `out` from the earlier audit's in `fromDir` (indexed by
 * `index`), with `changed` (sorted by id) in place of their old rows or inserted where their id
 * goes. Returns the new files' index.
 */
export async function spliceBuilds(
  fromDir: string,
  index: BuildsIndex,
  out: { csv: string; json: string },
  changed: SplicedRow[],
  copies?: { csv: string; json: string },
): Promise<BuildsIndex> {
  const n = index.n;
  // The first row that is not copied as it was.
  let first = n;
  for (const c of changed) {
    const at = index.find(c.id);
    first = Math.min(first, at >= 0 ? at : -at - 1);
  }
  const next = new BuildsIndex(Math.max(1, n + changed.length));
  for (let i = 0; i < first; i++) {
    next.add(index.ids[i], index.csv[i], index.json[i], index.flags[i] === 1);
  }
  // Everything before row `first`: one copy, then cut where that row started.
  const csvCut = index.csv[first];
  const jsonCut = first === 0 ? 1 : index.json[first] - 2;
  if (copies) {
    await Deno.rename(copies.csv, out.csv);
    await Deno.rename(copies.json, out.json);
  } else {
    await Deno.copyFile(`${fromDir}/builds.csv`, out.csv);
    await Deno.copyFile(`${fromDir}/builds.json`, out.json);
  }
  const csvOut = await Deno.open(out.csv, { write: true });
  const jsonOut = await Deno.open(out.json, { write: true });
  const csvIn = await Deno.open(`${fromDir}/builds.csv`, { read: true });
  const jsonIn = await Deno.open(`${fromDir}/builds.json`, { read: true });
  try {
    await csvOut.truncate(csvCut);
    await jsonOut.truncate(jsonCut);
    await csvOut.seek(csvCut, Deno.SeekMode.Start);
    await jsonOut.seek(jsonCut, Deno.SeekMode.Start);
    const csv = new Appender(csvOut, csvCut);
    const json = new Appender(jsonOut, jsonCut);
    const sep = () => json.text(next.n === 0 ? "\n" : ",\n");
    let i = first;
    let c = 0;
    while (i < n || c < changed.length) {
      if (c < changed.length && (i === n || changed[c].id <= index.ids[i])) {
        const row = changed[c++];
        if (i < n && row.id === index.ids[i]) i++;
        await sep();
        next.add(row.id, csv.offset, json.offset, row.flag);
        await csv.text(row.csv);
        await json.text(row.json);
        continue;
      }
      // Unchanged rows up to the next changed id: copied byte for byte.
      let j = i;
      const stop = c < changed.length ? changed[c].id : Infinity;
      while (j + 1 < n && index.ids[j + 1] < stop) j++;
      await sep();
      const csvShift = csv.offset - index.csv[i];
      const jsonShift = json.offset - index.json[i];
      for (let k = i; k <= j; k++) {
        next.add(
          index.ids[k],
          index.csv[k] + csvShift,
          index.json[k] + jsonShift,
          index.flags[k] === 1,
        );
      }
      await csv.copy(csvIn, index.csv[i], index.csv[j + 1]);
      await json.copy(jsonIn, index.json[i], index.json[j + 1] - 2);
      i = j + 1;
    }
    await json.text(next.n === 0 ? "]\n" : "\n]\n");
    await csv.flush();
    await json.flush();
  } finally {
    csvOut.close();
    jsonOut.close();
    csvIn.close();
    jsonIn.close();
  }
  return next;
}
