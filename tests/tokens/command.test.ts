/**
 * The build command below HTTP: how many RPC round trips it makes, where its time goes, and a
 * simulation that fails for real on the chain. One harness for the file.
 */
import { Connection, Keypair, PublicKey } from "@solana/web3.js";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { type Harness, startHarness } from "../support/harness.ts";
import { ApiError } from "../../src/http/errors.ts";
import { PythPriceSource } from "../../src/pricing/price-source.ts";
import type { Services } from "../../src/services.ts";
import { type BuildTimings, buildToken } from "../../src/tokens/build-token.ts";
import type { BuildRequest } from "../../src/tokens/request-schema.ts";
import { newSeed } from "../../src/tokens/transaction.ts";

/**
 * A Connection whose every JSON-RPC call is recorded. Calls that start while another is still in
 * flight belong to the same round trip; a call that starts with nothing in flight opens a new one.
 */
function countingConnection(url: string) {
  const waves: string[][] = [];
  let inFlight = 0;
  const fetchCounting: typeof fetch = async (input, init) => {
    if (inFlight === 0) waves.push([]);
    inFlight++;
    waves.at(-1)!.push(JSON.parse(String(init?.body)).method);
    try {
      const res = await fetch(input, init);
      // Read the body before counting the call as done: that is when its answer is usable.
      const text = await res.text();
      return new Response(text, { status: res.status, headers: res.headers });
    } finally {
      inFlight--;
    }
  };
  return {
    connection: new Connection(url, { commitment: "confirmed", fetch: fetchCounting }),
    waves,
  };
}

function request(payer: PublicKey, patch: Partial<BuildRequest> = {}): BuildRequest {
  return {
    payer,
    recipient: payer,
    name: "Counted",
    symbol: "CNT",
    metadataUri: "https://example.com/m/1.json",
    decimals: 6,
    supplyRaw: 1_000_000n,
    revokeMint: false,
    revokeFreeze: true,
    immutableMetadata: false,
    ...patch,
  };
}

type Step = [string, (h: Harness) => Promise<void>];
const steps: Step[] = [];
const step = (name: string, fn: Step[1]) => steps.push([name, fn]);

step(
  "exactly two sequential RPC round trips per build, the Pyth read inside the first",
  async (h) => {
    const { keyId, purchaseId, wallet } = await h.newApiKey();
    const { connection, waves } = countingConnection(h.chain.url);
    const s: Services = {
      ...h.services,
      connection,
      price: new PythPriceSource(connection, h.chain.pythSolUsdAccount, 120, Date.now),
    };
    const timings: BuildTimings[] = [];
    const other = Keypair.generate().publicKey;
    // First build on this connection: the Rent sysvar rides along in getMultipleAccounts.
    await buildToken(s, { keyId, purchaseId }, request(wallet.publicKey, { recipient: other }), {
      onTimings: (t) => timings.push(t),
    });
    assertEquals(waves.map((w) => w.sort()), [
      [
        "getAccountInfo",
        "getLatestBlockhash",
        "getMultipleAccounts",
        "getRecentPrioritizationFees",
      ],
      ["simulateTransaction"],
    ]);
    // Later builds use the cached rent: still two round trips.
    waves.length = 0;
    await buildToken(s, { keyId, purchaseId }, request(wallet.publicKey), {
      onTimings: (t) => timings.push(t),
    });
    assertEquals(waves.length, 2);
    assertEquals(waves[1], ["simulateTransaction"]);

    for (const t of timings) {
      assertEquals(t.rpcMs.length, 2);
      assert(t.totalMs >= t.rpcMs[0] + t.rpcMs[1] + t.storeMs - 0.001);
      assert(t.ownMs >= 0 && t.storeMs > 0);
    }
  },
);

step("a build that stops early reports its timings too, with one round trip", async (h) => {
  const { keyId, purchaseId } = await h.newApiKey();
  let seen: BuildTimings | null = null;
  const poor = Keypair.generate().publicKey;
  try {
    await buildToken(h.services, { keyId, purchaseId }, request(poor), {
      onTimings: (t) => (seen = t),
    });
    throw new Error("expected insufficient_funds");
  } catch (e) {
    assert(e instanceof ApiError && e.code === "insufficient_funds", String(e));
  }
  assertEquals(seen!.rpcMs.length, 1);
  assertEquals(seen!.storeMs, 0);
});

step("simulation_failed carries the program logs: the mint address is already taken", async (h) => {
  const { keyId, purchaseId, wallet } = await h.newApiKey();
  const seed = newSeed();
  const mint = await PublicKey.createWithSeed(wallet.publicKey, seed, TOKEN_PROGRAM_ID);
  // Someone funded the address first, so the System program refuses to create the mint there.
  h.chain.airdrop(mint.toBase58(), 1_000_000n);
  let error: ApiError | null = null;
  try {
    await buildToken(h.services, { keyId, purchaseId }, request(wallet.publicKey), { seed });
  } catch (e) {
    error = e as ApiError;
  }
  assert(error instanceof ApiError, String(error));
  assertEquals([error.code, error.status], ["simulation_failed", 400]);
  const logs = error.fields.logs as string[];
  assert(Array.isArray(logs) && logs.length > 0, JSON.stringify(error.fields));
  assertMatch(logs.join("\n"), /already in use/);
  assert(error.fields.error !== null && typeof error.fields.error === "object");
  // Nothing was built or counted.
  const usage = await h.kv.get(["p", "usage", purchaseId, new Date().toISOString().slice(0, 10)]);
  assertEquals(usage.value, null);
});

Deno.test("buildToken: round trips, timings, simulation failure", async (t) => {
  const h = await startHarness();
  try {
    for (const [name, fn] of steps) await t.step(name, () => fn(h));
  } finally {
    await h.close();
  }
});
