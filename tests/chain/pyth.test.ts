import { assert, assertEquals } from "../support/assert.ts";
import { PublicKey } from "@solana/web3.js";
import {
  decodePythPriceAccount,
  encodePythPriceAccount,
  PYTH_ORACLE_PROGRAM_ID,
  PYTH_PRICE_ACCOUNT_SIZE,
  PYTH_SOL_USD_PRICE_ACCOUNT,
  PythDecodeError,
} from "../../src/solana/pyth.ts";
import {
  decodePriceUpdateV2,
  encodePriceUpdateV2,
  PRICE_UPDATE_V2_DISCRIMINATOR,
  PRICE_UPDATE_V2_SIZE,
  PYTH_PUSH_ORACLE_PROGRAM_ID,
  PYTH_RECEIVER_PROGRAM_ID,
  PYTH_SOL_USD_FEED_ID,
  PYTH_SOL_USD_PRICE_FEED_ACCOUNT,
} from "../../src/solana/pyth-receiver.ts";
import { connect, start } from "./helpers.ts";

Deno.test("pyth layout: encode/decode round trip at the SDK's offsets", () => {
  const data = encodePythPriceAccount({
    priceUsd: 142.87654321,
    conf: 0.071,
    publishTime: 1_700_000_123,
    slot: 987_654,
  });
  assertEquals(data.length, PYTH_PRICE_ACCOUNT_SIZE);
  const v = new DataView(data.buffer);
  assertEquals(v.getUint32(0, true), 0xa1b2c3d4);
  assertEquals(v.getInt32(20, true), -8);
  assertEquals(v.getBigInt64(208, true), 14_287_654_321n); // agg.price
  assertEquals(v.getBigUint64(216, true), 7_100_000n); // agg.conf
  assertEquals(v.getUint32(224, true), 1); // agg.status = trading
  assertEquals(v.getBigUint64(232, true), 987_654n); // agg.pub_slot
  assertEquals(v.getBigInt64(96, true), 1_700_000_123n); // timestamp
  const p = decodePythPriceAccount(data);
  assertEquals(p.status, "trading");
  assertEquals(p.publishTime, 1_700_000_123);
  assertEquals(p.slot, 987_654);
  assert(Math.abs(p.price - 142.87654321) < 1e-9);
  assert(Math.abs(p.conf - 0.071) < 1e-9);

  const broken = data.slice();
  broken[0] = 0;
  let threw = false;
  try {
    decodePythPriceAccount(broken);
  } catch (e) {
    threw = e instanceof PythDecodeError;
  }
  assert(threw, "bad magic must be refused");
});

Deno.test("hosted Pyth SOL/USD account: republished each slot, price settable, goes stale when paused", async () => {
  const chain = await start({ slotMs: "manual", solUsdPrice: 150 });
  try {
    const conn = connect(chain, { manualSlots: true });
    // The legacy push account, still hosted beside the pull oracle's feed account (below).
    const key = new PublicKey(PYTH_SOL_USD_PRICE_ACCOUNT);
    const read = async () => {
      const acc = await conn.getAccountInfo(key, "processed");
      assert(acc);
      assertEquals(acc.owner.toBase58(), PYTH_ORACLE_PROGRAM_ID);
      return decodePythPriceAccount(acc.data);
    };
    let p = await read();
    assertEquals(p.price, 150);
    assertEquals(p.status, "trading");
    assertEquals(p.slot, chain.slot());
    // Published from the chain's clock, now: a generous bound, as the machine may be slow.
    assert(Math.abs(p.publishTime - Date.now() / 1000) < 120);

    chain.advanceSlots(3);
    assertEquals((await read()).slot, chain.slot());
    chain.setSolPrice(175.25);
    p = await read();
    assertEquals(p.price, 175.25);

    chain.pausePricePublishing(true);
    const frozen = await read();
    await new Promise((r) => setTimeout(r, 1100));
    chain.advanceSlots(30);
    p = await read();
    assertEquals(p.slot, frozen.slot);
    assertEquals(p.publishTime, frozen.publishTime);
    assert(chain.slot() - p.slot > 25, "older than pyth-sdk's VALID_SLOT_PERIOD");
    assert(Date.now() / 1000 - p.publishTime >= 1);

    // The admin route steers a chain started elsewhere.
    const res = await fetch(`${chain.url}/admin/price`, {
      method: "POST",
      body: JSON.stringify({ usd: 99.5, paused: false }),
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
    p = await read();
    assertEquals(p.price, 99.5);
    assertEquals(p.slot, chain.slot());
    assert(p.publishTime > frozen.publishTime);

    const program = await conn.getAccountInfo(new PublicKey(PYTH_ORACLE_PROGRAM_ID), "processed");
    assert(program?.executable);
  } finally {
    await chain.close();
  }
});

Deno.test("pull oracle layout: the SOL/USD feed account is the push-oracle PDA; encode/decode round trip", async () => {
  const feed = Uint8Array.from(PYTH_SOL_USD_FEED_ID.match(/../g)!.map((h) => parseInt(h, 16)));
  const [pda] = PublicKey.findProgramAddressSync(
    [new Uint8Array([0, 0]), feed],
    new PublicKey(PYTH_PUSH_ORACLE_PROGRAM_ID),
  );
  assertEquals(pda.toBase58(), PYTH_SOL_USD_PRICE_FEED_ACCOUNT);
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode("account:PriceUpdateV2")),
  );
  assertEquals(PRICE_UPDATE_V2_DISCRIMINATOR, digest.subarray(0, 8));

  for (
    const verification of [{ kind: "full" as const }, { kind: "partial" as const, signatures: 5 }]
  ) {
    const data = encodePriceUpdateV2({
      priceUsd: 142.87654321,
      conf: 0.071,
      publishTime: 1_700_000_123,
      postedSlot: 987_654,
      verification,
    });
    assertEquals(data.length, PRICE_UPDATE_V2_SIZE);
    const u = decodePriceUpdateV2(data);
    assertEquals([u.feedId, u.verification, u.publishTime, u.slot, u.expo], [
      PYTH_SOL_USD_FEED_ID,
      verification,
      1_700_000_123,
      987_654,
      -8,
    ]);
    assert(Math.abs(u.price - 142.87654321) < 1e-9);
    assert(Math.abs(u.conf - 0.071) < 1e-9);
  }
  // Full: the price message starts right after the one-byte tag, at 41.
  const full = encodePriceUpdateV2({ priceUsd: 1, publishTime: 1, postedSlot: 1 });
  assertEquals([full[40], full[41]], [1, feed[0]]);
});

Deno.test("hosted Pyth SOL/USD price feed account (pull oracle): owned by the receiver, republished each slot", async () => {
  const chain = await start({ slotMs: "manual", solUsdPrice: 150 });
  try {
    const conn = connect(chain, { manualSlots: true });
    assertEquals(chain.pythSolUsdAccount, PYTH_SOL_USD_PRICE_FEED_ACCOUNT);
    const read = async () => {
      const acc = await conn.getAccountInfo(new PublicKey(chain.pythSolUsdAccount), "processed");
      assert(acc);
      assertEquals(acc.owner.toBase58(), PYTH_RECEIVER_PROGRAM_ID);
      return decodePriceUpdateV2(acc.data);
    };
    let u = await read();
    assertEquals([u.price, u.feedId, u.verification.kind, u.slot], [
      150,
      PYTH_SOL_USD_FEED_ID,
      "full",
      chain.slot(),
    ]);
    chain.advanceSlots(2);
    chain.setSolPrice(175.25);
    u = await read();
    assertEquals([u.price, u.slot], [175.25, chain.slot()]);
  } finally {
    await chain.close();
  }
});
