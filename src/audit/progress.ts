/**
 * What an audit reports as it goes, and the line the CLI prints to stderr for each: a full audit
 * of a million events takes half a minute, and an operator should see it move and where its time
 * went.
 */

/**
 * Every `progressEvery` events of the full audit's first pass, then the replay and the tables as
 * each is done, with how long each took (`passesMs`: the full audit's passes, replay.ts).
 */
export type AuditProgress =
  | { step: "events"; done: number; of: number }
  | { step: "replayed"; ms: number; passesMs: Partial<Record<string, number>> }
  /**
   * `laterBuilds`: the builds table's rows the other thread wrote (tables-worker.ts), if any;
   * `earlyBuilds`: the rows this thread wrote before, while the live pass finished
   * (full-builds-table.ts `writeEarly`).
   */
  | { step: "tables"; ms: number; laterBuilds?: number; earlyBuilds?: number };

/** replay.ts's pass names, as the line says them. */
const PASSES: Record<string, string> = {
  chain: "chain pass",
  fold: "fold",
  settle: "settling moved documents",
  documents: "document by document comparison",
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString("en-US");

export function progressLine(p: AuditProgress): string {
  switch (p.step) {
    case "events":
      return `audit: ${count(p.done)} of ${count(p.of)} events read and verified`;
    case "replayed": {
      const passes = Object.entries(p.passesMs).map(([pass, ms]) =>
        pass === "live"
          // Run beside the chain pass when the KV is a file: what is timed is the wait after it.
          ? `live pass done ${seconds(ms ?? 0)} later`
          : `${PASSES[pass] ?? pass} ${seconds(ms ?? 0)}`
      );
      const detail = passes.length ? ` (${passes.join(", ")})` : "";
      return `audit: log and projections checked in ${seconds(p.ms)}${detail}`;
    }
    case "tables": {
      const notes = [
        p.earlyBuilds ? `${count(p.earlyBuilds)} builds written while the live pass finished` : "",
        p.laterBuilds ? `${count(p.laterBuilds)} of the builds on the other thread` : "",
      ].filter((n) => n);
      const detail = notes.length ? ` (${notes.join("; ")})` : "";
      return `audit: tables written in ${seconds(p.ms)}${detail}`;
    }
  }
}
