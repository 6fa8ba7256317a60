/**
 * The build command below HTTP: how many RPC round trips it makes, where its time goes, and a
 * simulation that fails for real on the chain. One harness for the file.
 */
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { type Harness, startHarness } from "../support/harness.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import { PythPriceSource } from "../../src/pricing/price-source.ts";
import type { Services } from "../../src/services.ts";
import { type BuildTimings, buildToken } from "../../src/tokens/build-token.ts";
import type { BuildRequest } from "../../src/tokens/request-schema.ts";
import { newSeed } from "../../src/tokens/transaction.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";

/**
 * A Connection whose every JSON-RPC call is recorded. Calls that start while another is still in
 * flight belong to the same round trip; a call that starts with nothing in flight opens a new one.
 * `alter` may change an answer's JSON body before the client sees it (a node of another version).
 */
function countingConnection(
  url: string,
  alter?: (method: string, body: { result?: { value?: Record<string, unknown> } }) => void,
) {
  const waves: string[][] = [];
  let inFlight = 0;
  const fetchCounting: typeof fetch = async (input, init) => {
    if (inFlight === 0) waves.push([]);
    inFlight++;
    const method = JSON.parse(String(init?.body)).method;
    waves.at(-1)!.push(method);
    try {
      const res = await fetch(input, init);
      // Read the body before counting the call as done: that is when its answer is usable.
      let text = await res.text();
      if (alter) {
        const body = JSON.parse(text);
        alter(method, body);
        text = JSON.stringify(body);
      }
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

const BUILD_WAVE = ["getMultipleAccounts", "getRecentPrioritizationFees", "simulateTransaction"];

step(
  "one RPC round trip per build; two when the rent or the Pyth price must be read first",
  async (h) => {
    const { keyId, wallet } = await h.newApiKey();
    const { connection, waves } = countingConnection(h.chain.url);
    let now = Date.now();
    const s: Services = {
      ...h.services,
      connection,
      price: new PythPriceSource(connection, h.chain.pythSolUsdAccount, 120, () => now),
    };
    const timings: BuildTimings[] = [];
    const caller = await keyDoc(h, keyId);
    const built = (patch: Partial<BuildRequest> = {}) =>
      buildToken(s, caller, request(wallet.publicKey, patch), {
        onTimings: (t) => timings.push(t),
      });
    // A connection's first build: the Rent sysvar and the price account, then the build itself.
    const first = await built({ recipient: Keypair.generate().publicKey });
    assertEquals(waves.map((w) => w.sort()), [["getAccountInfo", "getAccountInfo"], BUILD_WAVE]);
    // Rent cached, the price read 0.9 s ago: one round trip.
    waves.length = 0;
    now += 900;
    const second = await built();
    assertEquals(waves.map((w) => w.sort()), [BUILD_WAVE]);
    // The price reading is older than a second: read again first.
    waves.length = 0;
    now += 200;
    await built();
    assertEquals(waves.map((w) => w.sort()), [["getAccountInfo"], BUILD_WAVE]);

    assertEquals(timings.map((t) => t.rpcMs.length), [2, 1, 2]);
    for (const t of timings) {
      assert(t.totalMs >= t.rpcMs.reduce((a, b) => a + b, 0) + t.storeMs - 0.001);
      assert(t.ownMs >= 0 && t.storeMs > 0);
    }
    // The blockhash the node simulated with is the one handed out, and it is a live one.
    const height = await h.services.connection.getBlockHeight("confirmed");
    for (const b of [first, second]) {
      assert(b.lastValidBlockHeight! > height, `${b.lastValidBlockHeight} <= ${height}`);
      assert(b.recentBlockhash !== PublicKey.default.toBase58());
    }
  },
);

step(
  "a node that does not return the replacement blockhash costs one more round trip",
  async (h) => {
    const { keyId, wallet } = await h.newApiKey();
    // simulateTransaction answers lose `replacementBlockhash`, as from a node before Agave 2.0.
    const { connection, waves } = countingConnection(h.chain.url, (method, body) => {
      if (method === "simulateTransaction") delete body.result!.value!.replacementBlockhash;
    });
    const s: Services = { ...h.services, connection };
    await buildToken(s, await keyDoc(h, keyId), request(wallet.publicKey)); // reads the rent
    waves.length = 0;
    const res = await buildToken(s, await keyDoc(h, keyId), request(wallet.publicKey));
    assertEquals(waves.map((w) => w.sort()), [BUILD_WAVE, ["getLatestBlockhash"]]);
    assert(res.lastValidBlockHeight! > await connection.getBlockHeight("confirmed"));
  },
);

step(
  "a kept Pyth reading is quoted only while fresh, and never from a clock set back",
  async (h) => {
    let now = Date.now();
    // Kept for a day, so only the publication age and the clock decide.
    const price = new PythPriceSource(
      h.services.connection,
      h.chain.pythSolUsdAccount,
      120,
      () => now,
      86_400_000,
    );
    assertEquals(price.current(), null); // nothing read yet
    const read = await price.solUsd();
    assertEquals(price.current(), read);
    now -= 1_000;
    assertEquals(price.current(), null);
    now += 1_000 + 121_000; // past PRICE_MAX_AGE_S from its publication
    assertEquals(price.current(), null);
  },
);

step("a build that stops early reports its timings too", async (h) => {
  const { keyId } = await h.newApiKey();
  const timings: BuildTimings[] = [];
  const poor = Keypair.generate().publicKey;
  for (let i = 0; i < 2; i++) {
    try {
      await buildToken(h.services, await keyDoc(h, keyId), request(poor), {
        onTimings: (t) => timings.push(t),
      });
      throw new Error("expected insufficient_funds");
    } catch (e) {
      assert(e instanceof ApiError && e.code === "insufficient_funds", String(e));
    }
  }
  // The first may have read the rent; the second made the one round trip and never reached the store.
  assertEquals(timings[1].rpcMs.length, 1);
  assertEquals(timings.map((t) => t.storeMs), [0, 0]);
});

step("simulation_failed carries the program logs: the mint address is already taken", async (h) => {
  const { keyId, purchaseId, wallet } = await h.newApiKey();
  const seed = newSeed();
  const mint = await PublicKey.createWithSeed(wallet.publicKey, seed, TOKEN_PROGRAM_ID);
  // The payer itself (the seed's base: nobody else can) already made an account there, so the
  // System program refuses to allocate the mint at that address. Lamports alone would not.
  const c = h.services.connection;
  const { blockhash } = await c.getLatestBlockhash("confirmed");
  const taken = new Transaction({ feePayer: wallet.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.createAccountWithSeed({
      fromPubkey: wallet.publicKey,
      basePubkey: wallet.publicKey,
      seed,
      newAccountPubkey: mint,
      lamports: 2_000_000,
      space: 82,
      programId: TOKEN_PROGRAM_ID,
    }),
  );
  taken.sign(wallet);
  await h.waitForConfirmation(await c.sendRawTransaction(taken.serialize()));
  let error: ApiError | null = null;
  try {
    await buildToken(h.services, await keyDoc(h, keyId), request(wallet.publicKey), { seed });
  } catch (e) {
    error = e as ApiError;
  }
  assert(error instanceof ApiError, String(error));
  assertEquals([error.code, error.status], ["simulation_failed", 400]);
  const logs = error.fields.logs as string[];
  assert(Array.isArray(logs) && logs.length > 0, JSON.stringify(error.fields));
  assertMatch(logs.join("\n"), /already in use/);
  assert(error.fields.error !== null && typeof error.fields.error === "object");
  // The decoded reason: which instruction, which program, which code, in words.
  const failedIx = (error.fields.error as { InstructionError: [number, unknown] }).InstructionError;
  assertEquals(failedIx[1], { Custom: 0 });
  const instruction = error.fields.instruction as Record<string, unknown>;
  assertEquals([instruction.index, instruction.program, instruction.code], [
    failedIx[0],
    "11111111111111111111111111111111",
    0,
  ]);
  assertMatch(String(instruction.message), /already in use/);
  assertMatch(error.message, /already in use/);
  // Nothing was built or counted.
  // On no day at all: the check does not depend on which UTC day the wall clock shows.
  const usage = await Array.fromAsync(h.kv.list({ prefix: ["p", "usage", purchaseId] }));
  assertEquals(usage, []);
});

Deno.test("buildToken: round trips, timings, simulation failure", async (t) => {
  const h = await startHarness();
  try {
    for (const [name, fn] of steps) await t.step(name, () => fn(h));
  } finally {
    await h.close();
  }
});

/** The key as authentication hands it to a command. */
async function keyDoc(h: Harness, keyId: string): Promise<KeyDoc> {
  return (await h.kv.get<KeyDoc>(projectionKey("key", [keyId]))).value!;
}
