/** One table row per figure, printed together at the end and saved as JSON. */

export interface Row {
  area: string;
  figure: string;
  value: number | string | null;
  unit?: string;
  /** Human-readable goal, e.g. "<= 110 ms". */
  goal?: string;
  /** true / false when a goal applies; null when it could not be measured. */
  met?: boolean | null;
  /** The same figure as a fraction of the bare Hono route measured the same way. */
  ofBare?: number | null;
  note?: string;
}

export interface SectionResult {
  rows: Row[];
  /** Everything measured, for the JSON file. */
  raw: Record<string, unknown>;
}

const fmt = (v: Row["value"]) => {
  if (v === null || v === undefined) return "-";
  if (typeof v === "string") return v;
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en-US");
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
};

export function renderTable(rows: Row[]): string {
  const header = ["area", "figure", "value", "goal", "met", "of bare Hono", "note"];
  const body = rows.map((r) => [
    r.area,
    r.figure,
    `${fmt(r.value)}${r.unit ? ` ${r.unit}` : ""}`,
    r.goal ?? "",
    r.met === undefined ? "" : r.met === null ? "n/a" : r.met ? "yes" : "NO",
    r.ofBare === undefined || r.ofBare === null ? "" : `${(r.ofBare * 100).toFixed(1)}%`,
    r.note ?? "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [
    line(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...body.map(line),
  ].join("\n");
}
