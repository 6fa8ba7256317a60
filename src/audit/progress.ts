/** The progress lines a long audit prints on stderr (stdout keeps the one summary line). */
export type AuditProgress =
  | { step: "events"; pass: string; done: number; of: number }
  | { step: "replayed"; ms: number; passesMs: Partial<Record<string, number>> }
  | { step: "tables"; ms: number };

const PASSES: Record<string, string> = {
  touches: "last touches",
  live: "live projections",
  fold: "chain and fold",
  settle: "settling moved documents",
  documents: "document by document comparison",
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString("en-US");

export function progressLine(p: AuditProgress): string {
  switch (p.step) {
    case "events":
      return `audit: ${PASSES[p.pass] ?? p.pass}: ${count(p.done)} of ${count(p.of)} events`;
    case "replayed": {
      const passes = Object.entries(p.passesMs).map(([pass, ms]) =>
        `${PASSES[pass] ?? pass} ${seconds(ms ?? 0)}`
      );
      const detail = passes.length ? ` (${passes.join(", ")})` : "";
      return `audit: log and projections checked in ${seconds(p.ms)}${detail}`;
    }
    case "tables":
      return `audit: tables written in ${seconds(p.ms)}`;
  }
}
