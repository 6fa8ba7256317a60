/**
 * The vanity grinder: its SHA-256 agrees with node:crypto and PublicKey.createWithSeed, the
 * fast number check never misses a real match, it finds what was asked within its budget
 * (and says how many tries), it yields to the event loop between slices, and over its budget a
 * build is 422 vanity_timeout with nothing built or counted; one grind per key and a few per
 * process run at once.
 */
import { createHash } from "node:crypto";
import { Keypair, PublicKey } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import bs58 from "bs58";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { midHourHarness } from "../support/mid-hour-clock.ts";
import {
  addressMatches,
  fastMatcher,
  grindVanitySeed,
  matchProbability,
  seedHasher,
  type VanityPattern,
  VanityTimeout,
} from "../../src/tokens/vanity.ts";
import { allEvents } from "../reliability/support.ts";
import { VanityGate, vanityGateFor } from "../../src/tokens/vanity-gate.ts";
import { ApiError } from "../../src/kernel/errors.ts";

const STEM = "00112233445566778899aabb";
const digest = (h: Int32Array) => {
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) new DataView(out.buffer).setInt32(4 * i, h[i]);
  return out;
};

Deno.test("the seed hasher is SHA-256(base || seed || program), as createWithSeed computes it", async () => {
  const out = new Int32Array(8);
  for (const program of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
    for (let k = 0; k < 3; k++) {
      const base = Keypair.generate().publicKey;
      const hash = seedHasher(base, STEM, program);
      for (const counter of [0, 1, 255, 65_536, 0x7fffffff, 0xfffffffe]) {
        hash(counter, out);
        const seed = STEM + counter.toString(16).padStart(8, "0");
        const reference = createHash("sha256")
          .update(base.toBytes()).update(seed).update(program.toBytes()).digest();
        assertEquals(Array.from(digest(out)), Array.from(reference), seed);
        assertEquals(
          bs58.encode(digest(out)),
          (await PublicKey.createWithSeed(base, seed, program)).toBase58(),
        );
      }
    }
  }
});

Deno.test("the number check never misses an address that matches", () => {
  const base = Keypair.generate().publicKey;
  const hash = seedHasher(base, STEM, TOKEN_2022_PROGRAM_ID);
  const out = new Int32Array(8);
  const patterns: VanityPattern[] = [
    { prefix: "2", suffix: "", ignoreCase: false },
    { prefix: "A", suffix: "", ignoreCase: true },
    { prefix: "", suffix: "x", ignoreCase: false },
    { prefix: "", suffix: "Ab", ignoreCase: true },
    { prefix: "3", suffix: "9", ignoreCase: false },
  ];
  const fast = patterns.map(fastMatcher);
  const hits = patterns.map(() => 0);
  const passed = patterns.map(() => 0);
  const N = 60_000;
  for (let counter = 0; counter < N; counter++) {
    hash(counter, out);
    const address = bs58.encode(digest(out));
    patterns.forEach((p, i) => {
      const likely = fast[i](out);
      if (likely) passed[i]++;
      if (addressMatches(address, p)) {
        hits[i]++;
        assert(likely, `${JSON.stringify(p)} missed ${address}`);
      }
    });
  }
  // The check does filter: what it lets through is close to what really matches.
  patterns.forEach((p, i) => {
    assert(hits[i] > 0, JSON.stringify(p));
    assert(passed[i] <= hits[i] * 1.2 + 300, `${JSON.stringify(p)}: ${passed[i]} vs ${hits[i]}`);
    // And the odds the service quotes agree with what happened (loosely: a sample).
    const expected = N * matchProbability(p);
    assert(hits[i] > expected / 2 && hits[i] < expected * 2, `${hits[i]} vs ${expected}`);
  });
});

Deno.test("grinding finds prefixes and suffixes, either case, and says how many tries", async () => {
  const base = Keypair.generate().publicKey;
  for (
    const p of [
      { prefix: "A", suffix: "", ignoreCase: false },
      { prefix: "", suffix: "zz", ignoreCase: false },
      { prefix: "b", suffix: "Q", ignoreCase: true },
      { prefix: "", suffix: "pum", ignoreCase: true },
    ]
  ) {
    const r = await grindVanitySeed(base, TOKEN_2022_PROGRAM_ID, p, { budgetMs: 60_000 });
    assert(addressMatches(r.mint.toBase58(), p), r.mint.toBase58());
    assertEquals(
      (await PublicKey.createWithSeed(base, r.seed, TOKEN_2022_PROGRAM_ID)).toBase58(),
      r.mint.toBase58(),
    );
    assertEquals(r.seed.length, 32);
    assert(r.tries >= 1);
    if (!p.ignoreCase) {
      assert(r.mint.toBase58().startsWith(p.prefix) && r.mint.toBase58().endsWith(p.suffix));
    }
  }
});

Deno.test("a grind yields to the event loop between slices, and stops at its budget", async () => {
  // A clock that moves 1 ms per reading: the slices and the budget are counted in readings, so
  // the test does not depend on the machine's speed.
  let t = 0;
  const now = () => t++;
  let ticks = 0;
  let running = true;
  const tick = () => {
    ticks++;
    if (running) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const err = await assertRejects(
    () =>
      grindVanitySeed(
        // A fixed payer and seed stem: with the counting clock the tries are the same every run,
        // so whether "zzzz" turns up in them is too (a random payer found it now and then).
        Keypair.fromSeed(new Uint8Array(32).fill(7)).publicKey,
        TOKEN_2022_PROGRAM_ID,
        { prefix: "zzzz", suffix: "", ignoreCase: false },
        { budgetMs: 200, sliceMs: 10, now, seedStem: "0123456789abcdef01234567" },
      ),
    VanityTimeout,
  );
  running = false;
  assert((err as VanityTimeout).tries > 0);
  // About 200 / (10 + 2) slices, and a timer ran between each pair.
  assert(ticks >= 5, `only ${ticks} timer callbacks ran during the grind`);
});

Deno.test("POST /v1/tokens with vanity: the mint matches and tries are reported; over the budget 422 vanity_timeout, nothing counted", async () => {
  // Mid-hour: the usage read before and after falls on one day.
  const h = await startHarness(midHourHarness());
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const body = {
      payer: wallet.publicKey.toBase58(),
      name: "Vanity Cat",
      symbol: "VAN",
      metadataUri: "https://example.com/v.json",
      supply: "1",
    };
    for (const tokenProgram of ["spl-token", "token-2022"]) {
      const res = await h.request("/v1/tokens", {
        method: "POST",
        headers: bearer(apiKey),
        json: { ...body, tokenProgram, vanity: { prefix: "C", suffix: "x" } },
      });
      const built = await res.json();
      assertEquals(res.status, 201, JSON.stringify(built));
      assert(built.mint.startsWith("C") && built.mint.endsWith("x"), built.mint);
      assert(Number.isInteger(built.vanity.tries) && built.vanity.tries >= 1);
    }
    const events = (await allEvents(h.kv)).filter((e) => e.type === "TokenBuilt");
    assertEquals(events.length, 2);
    // deno-lint-ignore no-explicit-any
    const recorded = (events[1].data as any).vanity;
    assertEquals([recorded.prefix, recorded.suffix, recorded.ignoreCase], ["C", "x", false]);

    // A budget of 0: refused before any try, nothing built, nothing counted.
    h.services.config.vanityBudgetMs = 0;
    const me = async () =>
      (await (await h.request("/v1/me", { headers: bearer(apiKey) })).json()).usageToday.tokens;
    const before = await me();
    const res = await h.request("/v1/tokens", {
      method: "POST",
      headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
      json: { ...body, vanity: { suffix: "abcd", ignoreCase: true } },
    });
    const refused = await res.json();
    assertEquals([res.status, refused.error.code], [422, "vanity_timeout"]);
    assertEquals(refused.error.fields.budgetMs, 0);
    assert(refused.error.fields.expectedTries > 100_000);
    assertEquals(await me(), before);
    assertEquals((await allEvents(h.kv)).filter((e) => e.type === "TokenBuilt").length, 2);
  } finally {
    await h.close();
  }
});

Deno.test("vanity gate: one grind per key, at most the configured number at once; 429 beyond", async () => {
  const gate = new VanityGate(2);
  const a = gate.enter("a");
  await assertRejects(
    () => Promise.resolve().then(() => gate.enter("a")),
    ApiError,
    "this API key",
  );
  const b = gate.enter("b");
  const full = await assertRejects(
    () => Promise.resolve().then(() => gate.enter("c")),
    ApiError,
    "2 vanity addresses",
  );
  assertEquals([(full as ApiError).status, (full as ApiError).headers["Retry-After"]], [429, "1"]);
  a();
  a(); // giving a place back twice frees it once
  assertEquals(gate.running, 1);
  gate.enter("c")();
  b();
  assertEquals(gate.running, 0);

  // Through the API: while this key's grind holds the gate, a second vanity build is 429 and
  // counts nothing; a build without vanity goes ahead; once released, vanity builds again.
  const h = await startHarness();
  try {
    const { apiKey, wallet, keyId } = await h.newApiKey();
    const body = {
      payer: wallet.publicKey.toBase58(),
      name: "Gate Cat",
      symbol: "GATE",
      metadataUri: "https://example.com/g.json",
      supply: "1",
    };
    const post = async (json: Record<string, unknown>) => {
      const res = await h.request("/v1/tokens", { method: "POST", headers: bearer(apiKey), json });
      return { status: res.status, body: await res.json(), retry: res.headers.get("retry-after") };
    };
    const held = vanityGateFor(h.services, h.services.config.vanityConcurrency).enter(keyId);
    const busy = await post({ ...body, vanity: { suffix: "a" } });
    assertEquals([busy.status, busy.body.error.code, busy.retry], [429, "rate_limited", "1"]);
    assertEquals((await post(body)).status, 201);
    held();
    assertEquals((await post({ ...body, vanity: { suffix: "a" } })).status, 201);
    assertEquals((await allEvents(h.kv)).filter((e) => e.type === "TokenBuilt").length, 2);
  } finally {
    await h.close();
  }
});
