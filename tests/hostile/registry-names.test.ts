/**
 * The text rules against a real list of token names: the mainnet tokens of the retired SPL token
 * registry (`@solana/spl-token-registry`, 13,053 tokens). What the rules refuse of it is printed
 * and held under a bound, so a rule that starts refusing ordinary tickers fails here.
 */
import { assert, assertEquals } from "../support/assert.ts";
import {
  isSymbolCharacterMessage,
  TEXT_MESSAGES,
  textProblem,
} from "../../src/domain/text-rules.ts";

interface RegistryToken {
  chainId: number;
  name: string;
  symbol: string;
}

const list = JSON.parse(
  await Deno.readTextFile(
    new URL(
      import.meta.resolve("@solana/spl-token-registry/dist/main/tokens/solana.tokenlist.json"),
    ),
  ),
) as { tokens: RegistryToken[] };
const MAINNET = list.tokens.filter((t) => t.chainId === 101);

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
