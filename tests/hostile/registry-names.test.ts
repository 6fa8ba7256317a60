/**
 * The text rules against a real list of token names: the mainnet tokens of the retired SPL token
 * registry (`@solana/spl-token-registry`, 13,053 tokens). What the rules refuse of it is printed
 * and held under a bound, so a rule that starts refusing ordinary tickers fails here.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { DEFAULT_WELL_KNOWN_NAMES } from "../../src/config.ts";
import { wellKnownMatcher } from "../../src/tokens/well-known-names.ts";
import {
  isSymbolCharacterMessage,
  TEXT_MESSAGES,
  textProblem,
} from "../../src/domain/text-rules.ts";
import { outsideLock } from "../support/outside-lock.ts";

interface RegistryToken {
  chainId: number;
  name: string;
  symbol: string;
}

// The registry's 14 MB stay out of deno.lock (tests/support/outside-lock.ts).
const MAINNET = JSON.parse(
  await outsideLock(["--allow-read", "tests/hostile/registry-tokens.ts"]),
) as RegistryToken[];

const percent = (n: number, of: number) => `${n}/${of} (${((100 * n) / of).toFixed(3)}%)`;

Deno.test("registry symbols: the symbol character set refuses fewer than 0.1% of real tickers", () => {
  assert(MAINNET.length > 13_000, `${MAINNET.length} mainnet tokens`);
  const problems = MAINNET.map((t) => [t.symbol, textProblem(t.symbol, "symbol")] as const);
  const spaces = problems.filter(([, p]) => p === TEXT_MESSAGES.symbolSpace);
  const characters = problems.filter(([, p]) => isSymbolCharacterMessage(p ?? undefined));
  console.log(
    `registry symbols refused for a character outside the set: ${
      percent(characters.length, MAINNET.length)
    } (${characters.map(([s]) => s).join(", ")}); for spaces, as before: ${spaces.length}`,
  );
  assert(characters.length / MAINNET.length < 0.001, `${characters.length} refused`);
  // Everything refused is refused for one of those two reasons.
  assertEquals(problems.filter(([, p]) => p !== null).length, spaces.length + characters.length);
});

Deno.test("one-edit look-alikes by a known confusion are refused; measured on the registry, the rule refuses under 0.05% of real names", () => {
  const matcher = wellKnownMatcher(DEFAULT_WELL_KNOWN_NAMES);
  const refused: [string, string][] = [
    ["Soiana", "Solana"], // i for l
    ["SOIANA", "Solana"], // I for L, read as the l it is drawn as
    ["So1ana", "Solana"], // 1 for l
    ["Bltcoln", "Bitcoin"], // l for i, twice
    ["Jlto", "Jito"],
    ["Raydlum", "Raydium"],
    ["s0lana", "Solana"], // 0 for o
    ["b0nk", "BONK"],
    ["Ethereurn", "Ethereum"], // rn for m
    ["dogvvifhat", "dogwifhat"], // vv for w
    ["Marinacle", "Marinade"], // cl for d
  ];
  for (const [value, listed] of refused) {
    assertEquals(matcher.match(value), listed, value);
  }
  // An edit that is no known confusion, an upper-case L (capitals do not confuse L and I), and a
  // second word stay allowed.
  for (const value of ["Coinbasc", "JLTO", "DAL", "Soxana", "Solana Cat", "Bonkers", "SOLX"]) {
    assertEquals(matcher.match(value), null, value);
  }

  // The false-positive rate: registry names and symbols the confusion rule refuses that the rules
  // before it (skeleton, decorations, mixed scripts) let through.
  const before = wellKnownMatcher(DEFAULT_WELL_KNOWN_NAMES, { confusions: false });
  const values = MAINNET.flatMap((t) => [t.name, t.symbol]);
  const already = values.filter((v) => before.match(v) !== null).length;
  const added = values.filter((v) => !before.match(v) && matcher.match(v)).map((v) =>
    `${v} -> ${matcher.match(v)}`
  );
  console.log(
    `registry names and symbols refused by the confusion rule alone: ${
      percent(added.length, values.length)
    } (${added.join(", ")}); by the rules before it: ${already}`,
  );
  assert(added.length / values.length < 0.0005, `${added.length} refused`);
});
