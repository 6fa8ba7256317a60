/**
 * The vanity grinder: tries per second (against node:crypto doing the same hash, side by side),
 * the median time to a 4-character case-insensitive match, and how late a timer fires while a
 * grind runs (the event loop is yielded to between slices).
 */
import { createHash } from "node:crypto";
import { Keypair } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID } from "@solana/spl-token";
import {
  grindVanitySeed,
  matchProbability,
  type VanityPattern,
  VanityTimeout,
} from "../../src/tokens/vanity.ts";
import type { Row } from "../lib/report.ts";

const round = (n: number, d = 0) => Math.round(n * 10 ** d) / 10 ** d;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function vanity(opts: { quick: boolean; log: (m: string) => void }) {
  const rows: Row[] = [];
  const program = TOKEN_2022_PROGRAM_ID;
  const budgetMs = opts.quick ? 500 : 2_000;

  // Throughput: a pattern no grind of this length reaches, so it runs the whole budget.
  let tries = 0;
  try {
    await grindVanitySeed(Keypair.generate().publicKey, program, {
      prefix: "zzzz",
      suffix: "",
      ignoreCase: false,
    }, { budgetMs });
  } catch (e) {
    if (!(e instanceof VanityTimeout)) throw e;
    tries = e.tries;
  }
  const triesPerS = tries / (budgetMs / 1000);
  // The same hash through node:crypto, one object per try, as a general-purpose grinder would.
  const base = Keypair.generate().publicKey.toBytes();
  const programBytes = program.toBytes();
  const libStart = performance.now();
  let libTries = 0;
  while (performance.now() - libStart < budgetMs / 4) {
    for (let i = 0; i < 1000; i++, libTries++) {
      createHash("sha256").update(base).update(`00112233445566778899aabb${libTries}`)
        .update(programBytes).digest();
    }
  }
  const libPerS = libTries / ((performance.now() - libStart) / 1000);
  rows.push({
    area: "vanity",
    figure: "seed grinding tries/s (one SHA-256 + prefix/suffix check each)",
    value: `${round(triesPerS / 1000)}k /s`,
    note: `node:crypto createHash for the same hash: ${round(libPerS / 1000)}k /s ` +
      `(${round(triesPerS / libPerS, 1)}x); 10 ms slices, yielding between them`,
  });

  // Time to a match: 4 case-insensitive characters.
  const runs = opts.quick ? 5 : 21;
  const patterns: [string, VanityPattern[]][] = [
    [
      "suffix",
      ["pump", "moon", "cats", "xyzw", "bonk"].map((s) => ({
        prefix: "",
        suffix: s,
        ignoreCase: true,
      })),
    ],
    ["2 + 2", [{ prefix: "ab", suffix: "cd", ignoreCase: true }]],
    ["prefix", [{ prefix: "Bonk", suffix: "", ignoreCase: true }]],
  ];
  for (const [label, list] of patterns) {
    const ms: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < runs; i++) {
      const p = list[i % list.length];
      const t = performance.now();
      const r = await grindVanitySeed(Keypair.generate().publicKey, program, p, {
        budgetMs: 60_000,
      });
      ms.push(performance.now() - t);
      counts.push(r.tries);
    }
    const p = list[0];
    opts.log(`vanity ${label}: ${ms.map((m) => round(m)).join(", ")} ms`);
    rows.push({
      area: "vanity",
      figure: `median time to a match, 4 characters, ignoreCase (${label}: ${
        list.map((q) => `${q.prefix}…${q.suffix}`).join(", ")
      })`,
      value: `${round(median(ms))} ms`,
      goal: "< 2 s",
      met: median(ms) < 2_000,
      note: `${runs} runs; max ${round(Math.max(...ms))} ms; median tries ${
        round(median(counts))
      } (expected ${round(1 / matchProbability(p))} on average)`,
    });
  }

  // The event loop during a grind: how late a 5 ms timer fires.
  const lags: number[] = [];
  let running = true;
  const probe = () => {
    const due = performance.now() + 5;
    setTimeout(() => {
      lags.push(performance.now() - due);
      if (running) probe();
    }, 5);
  };
  probe();
  try {
    await grindVanitySeed(Keypair.generate().publicKey, program, {
      prefix: "zzzz",
      suffix: "",
      ignoreCase: false,
    }, { budgetMs: budgetMs / 2 });
  } catch (e) {
    if (!(e instanceof VanityTimeout)) throw e;
  }
  running = false;
  rows.push({
    area: "vanity",
    figure: "timer lateness while a grind runs (p50 / max)",
    value: `${round(median(lags), 1)} / ${round(Math.max(...lags), 1)} ms`,
    note: `${lags.length} timers of 5 ms; other requests are served between slices`,
  });
  return { rows, raw: { triesPerS, libPerS, lags } };
}
