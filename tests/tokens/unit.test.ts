/** The pure parts of the token build: validation, name folding, costs, the transaction, decide. */
import { TEXT_MESSAGES } from "../../src/domain/text-rules.ts";
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemInstruction,
  SystemProgram,
  Transaction,
  VersionedTransaction,
} from "@solana/web3.js";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import fc from "fast-check";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import { DEFAULT_WELL_KNOWN_NAMES } from "../../src/config.ts";
import { parseBuildRequest, U64_MAX } from "../../src/tokens/request-schema.ts";
import { MAX_NAME_BYTES, MAX_SYMBOL_BYTES, MAX_URI_BYTES } from "../../src/domain/onchain-text.ts";
import { skeleton, wellKnownMatcher } from "../../src/tokens/well-known-names.ts";
import {
  compileToken,
  deriveAddresses,
  MAX_COMPUTE_UNIT_LIMIT,
  newSeed,
  retarget,
  type TokenPlan,
} from "../../src/tokens/transaction.ts";
import { newReference } from "../../src/solana/reference.ts";
import {
  costBreakdown,
  priorityFeeLamports,
  priorityPrice,
  shortfall,
  spend,
  unitLimitFromSimulation,
} from "../../src/tokens/costs.ts";
import { decodeRentSysvar, minimumBalance, rentTable } from "../../src/tokens/rent.ts";
import { decideBuild } from "../../src/tokens/decide.ts";
import { secondsUntilUtcMidnight } from "../../src/kernel/time.ts";
import { payerProblem, recipientProblem } from "../../src/tokens/recipient.ts";
import { TOKEN_METADATA_PROGRAM_ID } from "../../src/solana/token-metadata.ts";
import { isRejection } from "../../src/kernel/rejection.ts";

const matcher = wellKnownMatcher(DEFAULT_WELL_KNOWN_NAMES);
const payer = Keypair.generate().publicKey.toBase58();
const good = {
  payer,
  name: "Moon Cat",
  symbol: "MCAT",
  metadataUri: "https://example.com/m/abc.json",
  supply: "1000000",
};

function fieldsOf(body: unknown): Record<string, unknown> {
  try {
    parseBuildRequest(body, matcher);
  } catch (e) {
    assert(e instanceof ApiError, `expected ApiError, got ${e}`);
    assertEquals(e.code, "invalid_request");
    assertEquals(e.status, 400);
    return e.fields;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be refused`);
}

Deno.test("metadataUri: https, or this service's own hosted metadata URL whatever its scheme", () => {
  const base = "http://127.0.0.1:8000";
  const own = `${base}/m/${"0123456789abcdef".repeat(2)}.json`;
  assertEquals(parseBuildRequest({ ...good, metadataUri: own }, matcher, base).metadataUri, own);
  const refused = (uri: string, publicBaseUrl: string | null) => {
    try {
      parseBuildRequest({ ...good, metadataUri: uri }, matcher, publicBaseUrl);
    } catch (e) {
      assert(e instanceof ApiError);
      return e.fields.metadataUri;
    }
    return null;
  };
  // Not ours: another host, another path under our host, a mangled id, or no base to compare.
  for (
    const uri of [
      "http://example.com/m/0123456789abcdef0123456789abcdef.json",
      `${base}/i/${"0".repeat(32)}.json`,
      `${base}/m/../${"0".repeat(32)}.json`,
      `${base}/m/${"0".repeat(31)}.json`,
    ]
  ) assertEquals(refused(uri, base), "must be an absolute https URL", uri);
  assertEquals(refused(own, null), "must be an absolute https URL");
  // Any https URL stays fine beside it.
  assertEquals(refused(good.metadataUri, base), null);
});

Deno.test("invisible formatting characters are refused in name and symbol; zero-width joiners stay", () => {
  // "\u202ECDSU" shows as USDC in a right-to-left aware wallet; the look-alike check sees CDSU.
  assertEquals(fieldsOf({ ...good, name: "\u202ECDSU", symbol: "\u202ELOS" }), {
    name: TEXT_MESSAGES.bidi,
    symbol: TEXT_MESSAGES.bidi,
  });
  assertEquals(fieldsOf({ ...good, name: "Cat\u2066x" }), { name: TEXT_MESSAGES.bidi });
  for (const name of ["A\u200EB", "Zero\u200Bwidth", "soft\u00ADhyphen", "x\u2060y"]) {
    assertEquals(fieldsOf({ ...good, name }), { name: TEXT_MESSAGES.blank }, JSON.stringify(name));
  }
  // An emoji family (joined by U+200D) and a Persian word with a zero-width non-joiner are names.
  for (
    const name of [
      "Family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}",
      "\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645",
    ]
  ) {
    assertEquals(parseBuildRequest({ ...good, name }, matcher).name, name);
  }
});

Deno.test("a valid request gets the seed's defaults", () => {
  const r = parseBuildRequest(good, matcher);
  assertEquals(r.decimals, 9);
  assertEquals(r.supplyRaw, 1_000_000n * 10n ** 9n);
  assertEquals(r.recipient.toBase58(), payer);
  assertEquals([r.revokeMint, r.revokeFreeze, r.immutableMetadata], [false, true, false]);
  const raw = parseBuildRequest({
    ...good,
    supply: undefined,
    supplyRaw: "18446744073709551615",
    decimals: 0,
  }, matcher);
  assertEquals(raw.supplyRaw, U64_MAX);
  // Multi-byte names count bytes, not characters: 8 three-byte characters are 24 bytes.
  assertEquals(parseBuildRequest({ ...good, name: "月".repeat(10) }, matcher).name.length, 10);
});

Deno.test("every field rule is a 400 naming the field", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ payer: undefined }, "payer"],
    [{ payer: "not-base58-0OIl" }, "payer"],
    [{ payer: "1111111111111111111111111111111" }, "payer"], // 31 bytes
    [{ name: undefined }, "name"],
    [{ name: "" }, "name"],
    [{ name: "x".repeat(33) }, "name"],
    [{ name: "月".repeat(11) }, "name"], // 33 bytes, 11 characters
    [{ name: "bad\u0000name" }, "name"],
    [{ name: 5 }, "name"],
    [{ symbol: "" }, "symbol"],
    [{ symbol: "ABCDEFGHIJK" }, "symbol"],
    [{ symbol: "ÄÄÄÄÄÄ" }, "symbol"], // 12 bytes
    [{ symbol: "MO ON" }, "symbol"],
    [{ symbol: "MO\tON" }, "symbol"],
    [{ symbol: "MO\u00a0ON" }, "symbol"],
    [{ metadataUri: "http://example.com/a.json" }, "metadataUri"],
    [{ metadataUri: "example.com/a.json" }, "metadataUri"],
    [{ metadataUri: "https://user:pw@example.com/a.json" }, "metadataUri"],
    [{ metadataUri: "https://example.com/" + "a".repeat(181) }, "metadataUri"],
    [{ metadataUri: undefined }, "metadataUri"],
    [{ supply: "12.5" }, "supply"],
    [{ supply: "-1" }, "supply"],
    [{ supply: 1000 }, "supply"],
    [{ supply: "0" }, "supply"],
    [{ supply: "18446744074" }, "supply"], // * 10^9 overflows u64
    [{ supply: undefined, supplyRaw: "18446744073709551616" }, "supplyRaw"],
    [{ supply: undefined, supplyRaw: "0" }, "supplyRaw"],
    [{ decimals: 10 }, "decimals"],
    [{ decimals: -1 }, "decimals"],
    [{ decimals: 2.5 }, "decimals"],
    [{ decimals: "9" }, "decimals"],
    [{ recipient: "nope" }, "recipient"],
    [{ revokeMint: "true" }, "revokeMint"],
    [{ revokeFreeze: 1 }, "revokeFreeze"],
    [{ immutableMetadata: null }, "immutableMetadata"],
    [{ extra: 1 }, "extra"],
  ];
  for (const [patch, field] of cases) {
    const fields = fieldsOf({ ...good, ...patch });
    assert(
      field in fields,
      `${JSON.stringify(patch)} should name ${field}, got ${JSON.stringify(fields)}`,
    );
  }
  // A PDA can't sign, so it can't be the payer.
  const pda = getAssociatedTokenAddressSync(TOKEN_PROGRAM_ID, new PublicKey(payer), true)
    .toBase58();
  assertMatch(String(fieldsOf({ ...good, payer: pda }).payer), /curve/);
  // Supply fits at decimals 0 but not at 9: the overflow is the product, not the number.
  parseBuildRequest({ ...good, supply: "18446744073709551615", decimals: 0 }, matcher);
});

Deno.test("supply and supplyRaw: both or neither name both; every bad field at once", () => {
  for (const body of [{ ...good, supplyRaw: "5" }, { ...good, supply: undefined }]) {
    const f = fieldsOf(body);
    assert("supply" in f && "supplyRaw" in f, JSON.stringify(f));
  }
  const f = fieldsOf({
    payer: "x",
    name: "",
    symbol: "A B",
    metadataUri: "ftp://x",
    decimals: 11,
    z: 1,
  });
  for (
    const k of ["payer", "name", "symbol", "metadataUri", "supply", "supplyRaw", "decimals", "z"]
  ) {
    assert(k in f, `missing ${k} in ${JSON.stringify(f)}`);
  }
  assert("body" in fieldsOf([1, 2]));
  assert("body" in fieldsOf(null));
});

Deno.test("well-known names are folded: case, NFKC, confusables, invisibles, 0/O and 1/l/I", () => {
  const refused = [
    "solana",
    "SOLANA",
    "S0LANA",
    "SoIana",
    "So1ana",
    "Ѕоlаnа", /* Cyrillic */
    "ＳＯＬ", /* fullwidth */
    "S\u200bO\u200dL",
    "U\ufeffSDC",
    "ᴜsᴅᴄ",
    "USDС", /* Cyrillic С */
    "ΗΝΤ", /* Greek */
    "$BONK",
    "B.O.N.K",
    "Wrapped-SOL",
    "usd coin",
    "Sōlana",
    "JUP\u0301",
    "ВТС", /* Cyrillic */
    "U$DC",
    "JlTO",
    "Bitcoіn",
  ];
  for (const n of refused) {
    assert(matcher.match(n) !== null, `${JSON.stringify(n)} (${skeleton(n)}) should be refused`);
  }
  const allowed = [
    "Solana Cat",
    "Moon",
    "SOLX",
    "USDCC",
    "Bonkers",
    "Pythagoras",
    "Ethan",
    "JUPITERS",
  ];
  for (const n of allowed) assertEquals(matcher.match(n), null, `${n} should be allowed`);
  const f = fieldsOf({ ...good, name: "Ѕоlаnа", symbol: "U$DC" });
  assertMatch(String(f.name), /Solana/);
  assertMatch(String(f.symbol), /USDC/);
  // The list comes from configuration.
  const custom = wellKnownMatcher(["Acme"]);
  assert(custom.match("ACМE") !== null);
  assertEquals(custom.match("Solana"), null);
});

Deno.test("recipient policy: wallets yes, PDAs only when they exist, token accounts and programs no", () => {
  const wallet = Keypair.generate().publicKey;
  const pda = PublicKey.findProgramAddressSync([new Uint8Array([1])], TOKEN_PROGRAM_ID)[0];
  const sys = { owner: SystemProgram.programId, executable: false, lamports: 1 };
  assertEquals(recipientProblem(wallet, null), null);
  assertEquals(recipientProblem(wallet, sys), null);
  assertMatch(recipientProblem(pda, null) ?? "", /off-curve/);
  assertEquals(recipientProblem(pda, sys), null);
  assertMatch(recipientProblem(wallet, { ...sys, owner: TOKEN_PROGRAM_ID }) ?? "", /token account/);
  assertMatch(recipientProblem(wallet, { ...sys, executable: true }) ?? "", /program/);
  assertEquals(payerProblem(null), null);
  assertEquals(payerProblem({ ...sys, dataLength: 0 }), null);
  assertMatch(payerProblem({ ...sys, dataLength: 8 }) ?? "", /plain wallet/);
});

Deno.test("rent follows the runtime's formula; costs and shortfall", () => {
  const data = new Uint8Array(17);
  const v = new DataView(data.buffer);
  v.setBigUint64(0, 3480n, true);
  v.setFloat64(8, 2, true);
  const p = decodeRentSysvar(data);
  assertEquals(minimumBalance(p, 0), 890_880n);
  const t = rentTable(p);
  assertEquals([t.mint, t.tokenAccount, t.metadata], [1_461_600n, 2_039_280n, 5_115_600n]);
  // The program's protocol fee is rent(1308) + 5440: 0.01 SOL at mainnet's rent, and it moves
  // with the rent (doubled lamports per byte-year: doubled rent part, same offset).
  assertEquals(t.metadataProtocolFee, 10_000_000n);
  v.setBigUint64(0, 6960n, true);
  assertEquals(rentTable(decodeRentSysvar(data)).metadataProtocolFee, 2n * 9_994_560n + 5_440n);
  v.setBigUint64(0, 3480n, true);
  // Lamports already at the token account's address lower its rent, down to 0.
  assertEquals(costBreakdown(1n, t, 0n, 39_280n).tokenAccountRent, 2_000_000n);
  assertEquals(costBreakdown(1n, t, 0n, 5_000_000n).tokenAccountRent, 0n);
  const c = costBreakdown(19_933_334n, t, 700n);
  assertEquals(
    spend(c),
    19_933_334n + 1_461_600n + 2_039_280n + 5_115_600n + 10_000_000n + 5_000n + 700n,
  );
  assertEquals(shortfall(spend(c), c), null); // spending down to exactly zero is allowed
  assertEquals(shortfall(spend(c) + 1n, c), { needed: spend(c) + 890_880n });
  assertEquals(shortfall(spend(c) + 890_880n, c), null);
  assertEquals(shortfall(0n, c), { needed: spend(c) + 890_880n });
});

Deno.test("compute budget: simulated units + 15% + 5000 (at least 100,000), price = capped p75 of recent fees", () => {
  assertEquals(unitLimitFromSimulation(100_000), 120_000);
  // Never below the floor that covers the metadata program's worst case over mints.
  assertEquals(unitLimitFromSimulation(60_000), 100_000);
  assertEquals(unitLimitFromSimulation(undefined), 300_000);
  assertEquals(unitLimitFromSimulation(1_390_000), 1_400_000);
  const fees = [0, 0, 10, 20, 30, 40, 50, 60].map((f, slot) => ({ slot, prioritizationFee: f }));
  assertEquals(priorityPrice(fees, 1_000_000), 40n);
  assertEquals(priorityPrice(fees, 25), 25n);
  assertEquals(priorityPrice([], 1_000), 0n);
  assertEquals(priorityFeeLamports(120_000, 40n), 5n); // 4.8 rounds up
});

Deno.test("the transaction: instructions in the contract's order, one signer, reference read-only", async () => {
  const payerKey = Keypair.generate().publicKey;
  const recipient = Keypair.generate().publicKey;
  const seed = newSeed();
  assertEquals(seed.length, 32);
  const addresses = await deriveAddresses(payerKey, seed, recipient);
  assertEquals(
    addresses.mint.toBase58(),
    (await PublicKey.createWithSeed(payerKey, seed, TOKEN_PROGRAM_ID)).toBase58(),
  );
  const reference = Keypair.generate().publicKey;
  const treasury = Keypair.generate().publicKey;
  const plan: TokenPlan = {
    ...addresses,
    payer: payerKey,
    recipient,
    seed,
    reference,
    treasury,
    name: "Moon",
    symbol: "MOON",
    uri: "https://example.com/m.json",
    decimals: 6,
    supplyRaw: 5n,
    revokeMint: true,
    revokeFreeze: true,
    immutableMetadata: false,
    feeLamports: 123n,
    mintRentLamports: 1_461_600n,
  };
  const blockhash = Keypair.generate().publicKey.toBase58();
  const { message, messageBytes, transaction } = compileToken(plan, {
    unitLimit: 99_000,
    microLamportsPerUnit: 7n,
  }, blockhash);
  assertEquals(message.header.numRequiredSignatures, 1);
  assertEquals(message.accountKeys[0].toBase58(), payerKey.toBase58());
  const programs = message.instructions.map((ix) =>
    message.accountKeys[ix.programIdIndex].toBase58()
  );
  assertEquals(
    programs,
    [
      ComputeBudgetProgram.programId,
      ComputeBudgetProgram.programId,
      SystemProgram.programId,
      SystemProgram.programId,
      TOKEN_PROGRAM_ID,
      ASSOCIATED_TOKEN_PROGRAM_ID,
      TOKEN_PROGRAM_ID,
      TOKEN_METADATA_PROGRAM_ID,
      TOKEN_PROGRAM_ID,
      SystemProgram.programId,
    ].map((k) => k.toBase58()),
  );
  // The mint is funded, then allocated with the seed: never CreateAccountWithSeed, which lamports
  // already at the address would make fail. The payer, as the base, is the one signer it needs.
  const legacy = Transaction.populate(message);
  const fund = SystemInstruction.decodeTransfer(legacy.instructions[2]);
  assertEquals(
    [fund.fromPubkey, fund.toPubkey, fund.lamports].map(String),
    [payerKey, addresses.mint, 1_461_600n].map(String),
  );
  assertEquals(SystemInstruction.decodeInstructionType(legacy.instructions[3]), "AllocateWithSeed");
  const allocate = SystemInstruction.decodeAllocateWithSeed(legacy.instructions[3]);
  assertEquals(
    [allocate.accountPubkey, allocate.basePubkey, allocate.seed, allocate.space, allocate.programId]
      .map(String),
    [addresses.mint, payerKey, seed, 82, TOKEN_PROGRAM_ID].map(String),
  );
  assert(
    legacy.instructions.every((ix) =>
      !ix.programId.equals(SystemProgram.programId) ||
      SystemInstruction.decodeInstructionType(ix) !== "CreateWithSeed"
    ),
  );
  const refIndex = message.accountKeys.findIndex((k) => k.equals(reference));
  assert(
    refIndex > 0 && !message.isAccountWritable(refIndex) && !message.isAccountSigner(refIndex),
  );
  const last = message.instructions.at(-1)!;
  assertEquals(message.accountKeys[last.accounts.at(-1)!].toBase58(), reference.toBase58());
  // Unsigned wire form: one zeroed signature slot, then exactly the hashed message bytes.
  const wire = transaction.serialize();
  const back = VersionedTransaction.deserialize(wire);
  assertEquals(back.signatures.length, 1);
  assert(back.signatures[0].every((b) => b === 0));
  assertEquals(Array.from(back.message.serialize()), Array.from(messageBytes));

  const keep = compileToken({ ...plan, revokeMint: false }, {
    unitLimit: 1,
    microLamportsPerUnit: 0n,
  }, blockhash);
  assertEquals(keep.message.instructions.length, 9);
});

Deno.test("the longest allowed name, symbol and uri fit in one transaction with every option", async () => {
  const payer = Keypair.generate().publicKey;
  let largest = 0;
  // Every combination; a recipient of its own adds an account key, a freeze authority 32 bytes,
  // a durable nonce its account, the RecentBlockhashes sysvar and AdvanceNonceAccount.
  for (const nonce of [false, true]) {
    for (const sameRecipient of [false, true]) {
      for (const revokeMint of [false, true]) {
        for (const revokeFreeze of [false, true]) {
          const seed = newSeed();
          const recipient = sameRecipient ? payer : Keypair.generate().publicKey;
          const plan: TokenPlan = {
            ...(await deriveAddresses(payer, seed, recipient)),
            payer,
            recipient,
            seed,
            reference: newReference(),
            treasury: Keypair.generate().publicKey,
            name: "N".repeat(MAX_NAME_BYTES),
            symbol: "S".repeat(MAX_SYMBOL_BYTES),
            uri: "https://" + "u".repeat(MAX_URI_BYTES - 8),
            decimals: 9,
            supplyRaw: U64_MAX,
            revokeMint,
            revokeFreeze,
            immutableMetadata: true,
            feeLamports: U64_MAX,
            mintRentLamports: U64_MAX,
            nonceAccount: nonce ? Keypair.generate().publicKey : null,
          };
          const { transaction } = compileToken(plan, {
            unitLimit: MAX_COMPUTE_UNIT_LIMIT,
            microLamportsPerUnit: U64_MAX,
          }, Keypair.generate().publicKey.toBase58());
          largest = Math.max(largest, transaction.serialize().length);
        }
      }
    }
  }
  // PACKET_DATA_SIZE: a larger transaction is refused by every RPC node and leader.
  assert(largest <= 1232, `the largest build is ${largest} bytes`);
});

Deno.test("retarget equals compiling again with the new budget and blockhash", async () => {
  const payer = Keypair.generate().publicKey;
  const plans = await Promise.all([false, true].map(async (sameRecipient) => {
    const seed = newSeed();
    const recipient = sameRecipient ? payer : Keypair.generate().publicKey;
    return {
      ...(await deriveAddresses(payer, seed, recipient)),
      payer,
      recipient,
      seed,
      reference: newReference(),
      treasury: Keypair.generate().publicKey,
      name: "Réassigned ✓",
      symbol: "RT",
      uri: "https://example.com/r.json",
      decimals: 9,
      supplyRaw: 10n ** 18n,
      revokeMint: sameRecipient,
      revokeFreeze: !sameRecipient,
      immutableMetadata: sameRecipient,
      feeLamports: 19_933_334n,
      mintRentLamports: 1_461_600n,
      // On a durable nonce, AdvanceNonceAccount comes before the compute budget.
      nonceAccount: sameRecipient ? Keypair.generate().publicKey : null,
    } satisfies TokenPlan;
  }));
  const placeholder = PublicKey.default.toBase58();
  fc.assert(
    fc.property(
      fc.constantFrom(...plans),
      fc.integer({ min: 0, max: 0xffff_ffff }),
      fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      (plan, unitLimit, microLamportsPerUnit, hash) => {
        const blockhash = new PublicKey(hash).toBase58();
        const budget = { unitLimit, microLamportsPerUnit };
        const probe = compileToken(
          plan,
          { unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit: 0n },
          placeholder,
        );
        const again = compileToken(plan, budget, blockhash);
        const moved = retarget(probe, budget, blockhash);
        assertEquals(moved.messageBytes, again.messageBytes);
        assertEquals(moved.wire, again.transaction.serialize());
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("decide: counts toward the day, refuses at the limit, ids follow the last one", () => {
  const now = Date.UTC(2030, 0, 2, 23, 59, 0);
  const cmd = {
    keyId: "k",
    purchaseId: "p",
    now,
    tokensPerDay: 25,
    conduct: { refusePayerAfter: 1, keyWalletTolerated: 3, share: 0.5, minPayers: 10 },
    draft: {} as Parameters<typeof decideBuild>[0]["draft"],
  };
  const fresh = { payer: null };
  const ok = decideBuild(cmd, { usage: { tokens: 24, metadata: 3 }, lastBuildId: 41, ...fresh });
  assert(!isRejection(ok));
  assertEquals([ok.data.buildId, ok.data.day], [42, "2030-01-02"]);
  assert(!isRejection(decideBuild(cmd, { usage: null, lastBuildId: null, ...fresh })));
  const no = decideBuild(cmd, { usage: { tokens: 25, metadata: 0 }, lastBuildId: 41, ...fresh });
  assert(isRejection(no));
  assertEquals(no.rejected, "daily_limit");
  assertEquals(secondsUntilUtcMidnight(now), 60);
});

Deno.test("decide: given a payer that landed a creation without the fee, then its build is refused naming payer", () => {
  const cmd = {
    keyId: "k",
    purchaseId: "p",
    now: Date.UTC(2030, 0, 2),
    tokensPerDay: 25,
    conduct: { refusePayerAfter: 2, keyWalletTolerated: 3, share: 0.5, minPayers: 10 },
    draft: {} as Parameters<typeof decideBuild>[0]["draft"],
  };
  const last = { mint: "MintX", signature: "SigX", keyId: "other", at: 0 };
  const once = decideBuild(cmd, { usage: null, lastBuildId: 1, payer: { unverified: 1, last } });
  assert(!isRejection(once), "below the configured number: still built");
  const twice = decideBuild(cmd, { usage: null, lastBuildId: 1, payer: { unverified: 2, last } });
  assert(isRejection(twice));
  assertEquals(twice.rejected, "invalid_request");
  assert(/landed 2 creation\(s\) without the service fee/.test(String(twice.fields?.payer)));
  assert(String(twice.fields?.payer).includes("MintX"));
});

Deno.test("a reference key is a fresh 32-byte address each time, no keypair behind it", () => {
  const refs = Array.from({ length: 64 }, () => newReference().toBase58());
  assertEquals(new Set(refs).size, refs.length);
  // Random bytes, not a keypair's public key: about half of them are off the ed25519 curve.
  const off = refs.filter((r) => !PublicKey.isOnCurve(new PublicKey(r).toBytes())).length;
  assert(off > 8 && off < 56, `${off} of 64 off the curve`);
});
