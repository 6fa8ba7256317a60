/**
 * Where audit rows go. Rows are written as they are produced, so a long history never sits in
 * memory: each table becomes `<table>.csv` and `<table>.json` (a JSON array) side by side.
 */

export type Row = Record<string, string | number | boolean | null>;

export interface AuditSink {
  write(table: string, row: Row): Promise<void>;
  /** Writes `summary.json` and closes every table. */
  close(summary: unknown): Promise<void>;
}

/** Keeps everything in memory; for tests and small programmatic audits. */
export class MemorySink implements AuditSink {
  readonly tables = new Map<string, Row[]>();
  summary: unknown = null;

  write(table: string, row: Row): Promise<void> {
    const rows = this.tables.get(table) ?? [];
    rows.push(row);
    this.tables.set(table, rows);
    return Promise.resolve();
  }

  rows(table: string): Row[] {
    return this.tables.get(table) ?? [];
  }

  close(summary: unknown): Promise<void> {
    this.summary = summary;
    return Promise.resolve();
  }
}

const NUMERIC = /^-?\d+(\.\d+)?$/;

/**
 * One CSV cell. Token names and symbols come from integrators, so a cell that a spreadsheet
 * would run as a formula (=, +, -, @, tab, CR first) is defused with a leading apostrophe.
 */
export function csvCell(v: Row[string]): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s) && !NUMERIC.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvLine(cells: Row[string][]): string {
  return cells.map(csvCell).join(",") + "\r\n";
}

interface TableFiles {
  columns: string[];
  csv: Deno.FsFile;
  json: Deno.FsFile;
  rows: number;
}

/** Writes each table to `<dir>/<table>.csv` and `<dir>/<table>.json` as rows arrive. */
export class FileSink implements AuditSink {
  readonly #tables = new Map<string, TableFiles>();
  readonly #enc = new TextEncoder();

  private constructor(readonly dir: string, readonly columns: Record<string, string[]>) {}

  /** `columns` fixes each table's CSV header, so an empty table still gets one. */
  static async create(dir: string, columns: Record<string, string[]>): Promise<FileSink> {
    await Deno.mkdir(dir, { recursive: true });
    const sink = new FileSink(dir, columns);
    for (const table of Object.keys(columns)) await sink.#open(table);
    return sink;
  }

  async #open(table: string): Promise<TableFiles> {
    const existing = this.#tables.get(table);
    if (existing) return existing;
    const opts = { write: true, create: true, truncate: true };
    const files: TableFiles = {
      columns: this.columns[table] ?? [],
      csv: await Deno.open(`${this.dir}/${table}.csv`, opts),
      json: await Deno.open(`${this.dir}/${table}.json`, opts),
      rows: 0,
    };
    this.#tables.set(table, files);
    await this.#put(files.csv, csvLine(files.columns));
    await this.#put(files.json, "[");
    return files;
  }

  async #put(file: Deno.FsFile, text: string): Promise<void> {
    const bytes = this.#enc.encode(text);
    let off = 0;
    while (off < bytes.length) off += await file.write(bytes.subarray(off));
  }

  async write(table: string, row: Row): Promise<void> {
    const t = await this.#open(table);
    if (t.columns.length === 0) t.columns = Object.keys(row);
    await this.#put(t.csv, csvLine(t.columns.map((c) => row[c] ?? null)));
    await this.#put(t.json, `${t.rows === 0 ? "\n" : ",\n"}${JSON.stringify(row)}`);
    t.rows++;
  }

  async close(summary: unknown): Promise<void> {
    for (const t of this.#tables.values()) {
      await this.#put(t.json, t.rows === 0 ? "]\n" : "\n]\n");
      t.csv.close();
      t.json.close();
    }
    this.#tables.clear();
    await Deno.writeTextFile(`${this.dir}/summary.json`, JSON.stringify(summary, null, 2) + "\n");
  }
}
