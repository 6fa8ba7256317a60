/** The audit's progress lines (src/audit/progress.ts), as the CLI prints them to stderr. */
import { assertEquals } from "../support/assert.ts";
import { progressLine } from "../../src/audit/progress.ts";

Deno.test("progress lines: events read, the replay's passes with their times, the tables", () => {
  assertEquals(
    progressLine({ step: "events", done: 300_000, of: 1_000_000 }),
    "audit: 300,000 of 1,000,000 events read and verified",
  );
  assertEquals(
    progressLine({
      step: "replayed",
      ms: 29_812,
      passesMs: { chain: 17_104, live: 352, fold: 12_356, settle: 0.1 },
    }),
    "audit: log and projections checked in 29.8 s (chain pass 17.1 s, live pass done 0.4 s " +
      "later, fold 12.4 s, settling moved documents 0.0 s)",
  );
  assertEquals(
    progressLine({ step: "replayed", ms: 2_300, passesMs: {} }),
    "audit: log and projections checked in 2.3 s",
  );
  assertEquals(progressLine({ step: "tables", ms: 4_270 }), "audit: tables written in 4.3 s");
  assertEquals(
    progressLine({ step: "tables", ms: 2_270, laterBuilds: 132_181 }),
    "audit: tables written in 2.3 s (132,181 of the builds on the other thread)",
  );
  assertEquals(
    progressLine({ step: "tables", ms: 1_870, laterBuilds: 132_181, earlyBuilds: 40_500 }),
    "audit: tables written in 1.9 s (40,500 builds written while the live pass finished; " +
      "132,181 of the builds on the other thread)",
  );
});
