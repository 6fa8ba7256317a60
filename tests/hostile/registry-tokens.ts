/**
 * Prints the token registry's mainnet names and symbols as JSON, for registry-names.test.ts. Run
 * with --no-lock (tests/support/outside-lock.ts), so the registry stays out of deno.lock; the
 * specifier is a value, not a literal, so `deno check tests/` does not put it back either.
 */
const REGISTRY = "npm:@solana/spl-token-registry@0.2.4574/dist/main/tokens/solana.tokenlist.json";

const { default: list } = await import(REGISTRY, { with: { type: "json" } });
const mainnet = (list.tokens as { chainId: number; name: string; symbol: string }[])
  .filter((t) => t.chainId === 101)
  .map(({ chainId, name, symbol }) => ({ chainId, name, symbol }));
console.log(JSON.stringify(mainnet));
