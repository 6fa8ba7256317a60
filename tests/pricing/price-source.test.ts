/**
 * What PythPriceSource quotes from, and what it refuses. The embedded chain publishes a healthy
 * feed (tests/chain/pyth.test.ts, tests/http/foundation.test.ts); the accounts a real cluster can
 * hold but that chain never produces (partly verified, another feed, another owner, a wide
 * confidence interval, a clock ahead of ours) are handed in here as account contents.
 */
import { type Connection, PublicKey } from "@solana/web3.js";
import { assertEquals, assertRejects } from "../support/assert.ts";
import {
  MAX_CONF_RATIO,
  PriceUnavailable,
  PythPriceSource,
} from "../../src/pricing/price-source.ts";
import { solPriceOr503 } from "../../src/pricing/quote.ts";
import {
  encodePriceUpdateV2,
  PYTH_RECEIVER_PROGRAM_ID,
  PYTH_SOL_USD_PRICE_FEED_ACCOUNT,
} from "../../src/solana/pyth-receiver.ts";
import { encodePythPriceAccount, PYTH_ORACLE_PROGRAM_ID } from "../../src/solana/pyth.ts";
import { ApiError } from "../../src/kernel/errors.ts";

const NOW_S = 1_800_000_000;
const clock = () => NOW_S * 1000;

/** An RPC that holds one account (or fails with `error`). */
function holding(account: { data: Uint8Array; owner: string } | null, error?: string) {
  return {
    getAccountInfo: () =>
      error ? Promise.reject(new Error(error)) : Promise.resolve(
        account && { data: account.data, owner: new PublicKey(account.owner) },
      ),
  } as unknown as Connection;
}

const source = (conn: Connection) =>
  new PythPriceSource(conn, PYTH_SOL_USD_PRICE_FEED_ACCOUNT, 120, clock);
const feed = (over: Parameters<typeof encodePriceUpdateV2>[0]) => ({
  data: encodePriceUpdateV2(over),
  owner: PYTH_RECEIVER_PROGRAM_ID,
});
const healthy = { priceUsd: 150, publishTime: NOW_S - 2, postedSlot: 10 };

async function refusal(conn: Connection): Promise<string> {
  const e = await assertRejects(() => source(conn).solUsd(), PriceUnavailable);
  return (e as PriceUnavailable).message;
}

Deno.test("a fully verified SOL/USD feed account, and a legacy push account, are quoted", async () => {
  assertEquals((await source(holding(feed(healthy))).solUsd()).usd, 150);
  const legacy = {
    data: encodePythPriceAccount({ priceUsd: 151, publishTime: NOW_S - 2, slot: 10 }),
    owner: PYTH_ORACLE_PROGRAM_ID,
  };
  assertEquals((await source(holding(legacy)).solUsd()).usd, 151);
});

Deno.test("partly verified, another feed, another owner, too uncertain, from the future, stale: refused", async () => {
  const partial = feed({ ...healthy, verification: { kind: "partial", signatures: 5 } });
  assertEquals(await refusal(holding(partial)), "price account malformed");
  const eth = feed({ ...healthy, feedId: "ff".repeat(32) });
  assertEquals(await refusal(holding(eth)), "price account malformed");
  const forged = { ...feed(healthy), owner: PublicKey.default.toBase58() };
  assertEquals(await refusal(holding(forged)), "price account malformed");
  const wide = feed({ ...healthy, conf: 150 * (MAX_CONF_RATIO + 0.01) });
  assertEquals(await refusal(holding(wide)), "price too uncertain (confidence ±3.00%)");
  const ahead = feed({ ...healthy, publishTime: NOW_S + 3600 });
  assertEquals(await refusal(holding(ahead)), "price is published in the future");
  const stale = feed({ ...healthy, publishTime: NOW_S - 121 });
  assertEquals(await refusal(holding(stale)), "price is 121 s old");
  assertEquals(await refusal(holding(null)), "price account not found");
});

Deno.test("the 503 names the reason only; what the RPC said goes to the log", async () => {
  const logged: Record<string, unknown>[] = [];
  const failing = holding(null, "401 Unauthorized: invalid api key sk_live_abc");
  const e = await assertRejects(
    () => solPriceOr503(source(failing), (d) => logged.push(d)),
    ApiError,
  );
  const body = JSON.stringify((e as ApiError).body());
  assertEquals((e as ApiError).body().error.fields, { price: "price account unreadable" });
  assertEquals(body.includes("sk_live"), false);
  assertEquals(logged, [{
    reason: "price account unreadable",
    detail: "401 Unauthorized: invalid api key sk_live_abc",
  }]);
});
