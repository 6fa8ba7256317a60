/** The audit's progress lines (src/audit/progress.ts), as the CLI prints them to stderr. */
import { assertEquals } from "../support/assert.ts";
import { progressLine } from "../../src/audit/progress.ts";

Deno.test("progress lines: events read in each pass, the replay's passes with their times, the tables", () => {
  assertEquals(
    progressLine({ step: "events", pass: "fold", done: 300_000, of: 1_000_000 }),
    "audit: chain and fold: 300,000 of 1,000,000 events",
  );
  assertEquals(
    progressLine({ step: "events", pass: "touches", done: 100_000, of: 1_000_000 }),
    "audit: last touches: 100,000 of 1,000,000 events",
  );
  assertEquals(
    progressLine({
      step: "replayed",
      ms: 29_812,
      passesMs: { touches: 7_104, live: 5_352, fold: 12_356, settle: 0.1 },
    }),
    "audit: log and projections checked in 29.8 s (last touches 7.1 s, live projections 5.4 s, " +
      "chain and fold 12.4 s, settling moved documents 0.0 s)",
  );
  assertEquals(
    progressLine({ step: "replayed", ms: 2_300, passesMs: {} }),
    "audit: log and projections checked in 2.3 s",
  );
  assertEquals(progressLine({ step: "tables", ms: 4_270 }), "audit: tables written in 4.3 s");
});
