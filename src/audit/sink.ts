/**
 * Where audit rows go. Rows are written as they are produced, so a long history never sits in
 * memory: each table becomes `<table>.csv` and `<table>.json` (a JSON array) side by side.
 */

const encoder = new TextEncoder();

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
  // A number or a boolean has nothing to defuse or quote.
  if (typeof v !== "string") return String(v);
  let s = v;
  if (FORMULA_START.has(s.charCodeAt(0)) && !NUMERIC.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** = + - @ tab CR: what a spreadsheet may read as the start of a formula. */
const FORMULA_START = new Set([0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d]);

export function csvLine(cells: Row[string][]): string {
  return cells.map(csvCell).join(",") + "\r\n";
}

/** A row's CSV line, its cells in the order of `columns`. */
export const csvRow = (columns: string[], row: Row): string =>
  csvLine(columns.map((c) => row[c] ?? null));

interface TableFiles {
  columns: string[];
  csv: BufferedFile;
  json: BufferedFile;
  rows: number;
}

/** Collects text and writes it as UTF-8 in large pieces: a write per row cost more than the row. */
class BufferedFile {
  #parts: string[] = [];
  #chars = 0;

  constructor(readonly file: Deno.FsFile) {}

  async put(text: string): Promise<void> {
    this.#parts.push(text);
    this.#chars += text.length;
    if (this.#chars >= 256 * 1024) await this.flush();
  }

  async flush(): Promise<void> {
    const bytes = encoder.encode(this.#parts.join(""));
    this.#parts = [];
    this.#chars = 0;
    let off = 0;
    while (off < bytes.length) off += await this.file.write(bytes.subarray(off));
  }

  async close(): Promise<void> {
    await this.flush();
    this.file.close();
  }
}

/** A row's JSON object in a table's file, with the separator before it. */
const jsonRow = (row: Row, first: boolean) => `${first ? "\n" : ",\n"}${JSON.stringify(row)}`;

const WRITE = { write: true, create: true, truncate: true };

/** Writes each table to `<dir>/<table>.csv` and `<dir>/<table>.json` as rows arrive. */
export class FileSink implements AuditSink {
  readonly #tables = new Map<string, TableFiles>();

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
    const files: TableFiles = {
      columns: this.columns[table] ?? [],
      csv: new BufferedFile(await Deno.open(`${this.dir}/${table}.csv`, WRITE)),
      json: new BufferedFile(await Deno.open(`${this.dir}/${table}.json`, WRITE)),
      rows: 0,
    };
    this.#tables.set(table, files);
    await files.csv.put(csvLine(files.columns));
    await files.json.put("[");
    return files;
  }

  async write(table: string, row: Row): Promise<void> {
    const t = this.#tables.get(table) ?? await this.#open(table);
    if (t.columns.length === 0) t.columns = Object.keys(row);
    await t.csv.put(csvRow(t.columns, row));
    await t.json.put(jsonRow(row, t.rows === 0));
    t.rows++;
  }

  async close(summary: unknown): Promise<void> {
    for (const t of this.#tables.values()) {
      await t.json.put(t.rows === 0 ? "]\n" : "\n]\n");
      await t.csv.close();
      await t.json.close();
    }
    this.#tables.clear();
    await Deno.writeTextFile(`${this.dir}/summary.json`, JSON.stringify(summary, null, 2) + "\n");
  }
}
