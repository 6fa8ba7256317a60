/**
 * A build that never lands must leave the open set once its blockhash has expired, even when
 * someone has landed more transactions carrying its reference than one lookup pages through.
 * Otherwise every full sweep pays the whole page bound for it again, forever: a few such builds
 * (a key and a few thousand 5,000-lamport transactions each) would use the watcher's whole RPC
 * share, and every customer's landings would wait.
 */
import { assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { buildBy } from "../../src/creation/build-records.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";

Deno.test("watcher: a never-sent build whose reference is flooded past the page bound still expires", async () => {
  const h = await startHarness({ chain: { slotMs: "manual" } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const res = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: {
        payer: wallet.publicKey.toBase58(),
        name: "Flooded",
        symbol: "FLD",
        metadataUri: "https://example.com/m/flooded.json",
        supply: "1000",
      },
    });
    const body = await res.json();
    assertEquals(res.status, 201, JSON.stringify(body));
    const b = (await buildBy(h.kv, "build_by_mint", body.mint))!;
    // The build's owner knows its reference: they land more transactions carrying it than one
    // lookup pages through (the bound is scaled down here: 2 pages of 5), signed by someone else.
    h.chain.airdrop(b.reference, 1_000_000_000n);
    for (let i = 1; i <= 14; i++) h.chain.airdrop(b.reference, BigInt(i));
    // Long past its blockhash's validity.
    h.chain.advanceSlots(b.lastValidBlockHeight! - h.chain.blockHeight() + 400);
    const lookup = { pageSize: 5, maxPages: 2 };
    for (let sweep = 0; sweep < 3; sweep++) {
      await sweepOpenBuilds(h.services, { full: true, lookup });
    }
    const after = (await buildBy(h.kv, "build_by_mint", body.mint))!;
    assertEquals(after.status, "expired");
    assertEquals((await sweepOpenBuilds(h.services, { full: true, lookup })).open, 0);
  } finally {
    await h.close();
  }
});
