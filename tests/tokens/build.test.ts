/**
 * POST /v1/tokens end to end on the embedded chain: the returned transaction is signed with the
 * payer's key, sent, and the chain is read back. One harness for the whole file.
 */
import { utcDay } from "../../src/kernel/time.ts";
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  type Message,
  type PublicKey,
  PublicKey as Key,
  SystemProgram,
  Transaction,
  VersionedTransaction,
} from "@solana/web3.js";
import { getAccount, getMint, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import bs58 from "bs58";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { midHourHarness } from "../support/mid-hour-clock.ts";
import { decodeMetadataAccount } from "../../src/solana/token-metadata.ts";
import { sha256Hex } from "../../src/kernel/hashing.ts";
import { PythPriceSource } from "../../src/pricing/price-source.ts";
import { priorityPrice, unitLimitFromSimulation } from "../../src/tokens/costs.ts";
import { buildToken } from "../../src/tokens/build-token.ts";
import type { BuildRequest } from "../../src/tokens/request-schema.ts";
import { newSeed } from "../../src/tokens/transaction.ts";
import type { ApiError } from "../../src/kernel/errors.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { holdNextCommit } from "../reliability/support.ts";
import { WELL_KNOWN_NAMES_KEY } from "../../src/admin/well-known-names.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";

const URI = "https://example.com/m/0123abcd.json";

type Step = [string, (h: Harness) => Promise<void>];
const steps: Step[] = [];
/** Steps share one chain and service: starting a harness costs more than most steps. */
const step = (name: string, fn: Step[1]) => steps.push([name, fn]);

async function build(
  h: Harness,
  apiKey: string,
  json: unknown,
  headers: Record<string, string> = {},
) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    // A fresh Idempotency-Key per call, as a careful client sends; tests that need a fixed key or
    // none at all pass their own headers.
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID(), ...headers },
    json,
  });
  const body = await res.json();
  if (res.status === 500) console.error(h.logs.filter((l) => l.includes('"error"')).slice(-3));
  return { res, body };
}

/** The reference is the last account of the last instruction (the fee transfer). */
function referenceOf(tx: VersionedTransaction): PublicKey {
  const m = tx.message;
  const last = m.compiledInstructions.at(-1)!;
  return m.staticAccountKeys[last.accountKeyIndexes.at(-1)!];
}

async function signAndSend(h: Harness, b64: string, payer: Keypair): Promise<string> {
  const tx = decodeTx(b64);
  tx.sign([payer]);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

step(
  "a build signed by the payer alone lands: mint, supply, metadata, fee, reference",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    const c = h.services.connection;
    const { res, body } = await build(h, apiKey, {
      payer: wallet.publicKey.toBase58(),
      name: "Moon Cat",
      symbol: "MCAT",
      metadataUri: URI,
      supply: "1000000",
    });
    assertEquals(res.status, 201, JSON.stringify(body));
    assertEquals(Object.keys(body).sort(), [
      "buildId",
      "costs",
      "expiresInSeconds",
      "fee",
      "format",
      "lastValidBlockHeight",
      "metadataAccount",
      "mint",
      "recentBlockhash",
      "recipientTokenAccount",
      "requiredSigner",
      "transaction",
      "transactionEncoding",
    ]);
    assertEquals(typeof body.buildId, "number");
    assertEquals(body.transactionEncoding, "base64");
    assertEquals(body.format, "legacy-unsigned");
    assertEquals(body.requiredSigner, wallet.publicKey.toBase58());
    assertEquals(body.expiresInSeconds, 60);
    assertEquals(typeof body.lastValidBlockHeight, "number");
    // ceil(2.99 / 150 * 1e9) at the harness's fixed price.
    assertEquals(body.fee, {
      usd: 2.99,
      lamports: "19933334",
      treasury: h.treasury.publicKey.toBase58(),
    });

    const tx = decodeTx(body.transaction);
    assertEquals(tx.version, "legacy");
    assertEquals(tx.message.header.numRequiredSignatures, 1);
    assertEquals(tx.message.staticAccountKeys[0].toBase58(), wallet.publicKey.toBase58());
    assertEquals(tx.message.recentBlockhash, body.recentBlockhash);
    const reference = referenceOf(tx);

    const treasuryBefore = await c.getBalance(h.treasury.publicKey, "confirmed");
    const sig = await signAndSend(h, body.transaction, wallet);

    const mint = await getMint(c, new Key(body.mint), "confirmed");
    assertEquals(mint.decimals, 9);
    assertEquals(mint.mintAuthority?.toBase58(), wallet.publicKey.toBase58());
    assertEquals(mint.freezeAuthority, null);
    assertEquals(mint.supply, 1_000_000n * 10n ** 9n);
    const ata = await getAccount(c, new Key(body.recipientTokenAccount), "confirmed");
    assertEquals(ata.owner.toBase58(), wallet.publicKey.toBase58());
    assertEquals(ata.amount, 1_000_000n * 10n ** 9n);
    const meta = decodeMetadataAccount(
      (await c.getAccountInfo(new Key(body.metadataAccount), "confirmed"))!.data,
    );
    assertEquals([meta.name, meta.symbol, meta.uri, meta.isMutable], [
      "Moon Cat",
      "MCAT",
      URI,
      true,
    ]);
    assertEquals([meta.mint, meta.updateAuthority], [body.mint, wallet.publicKey.toBase58()]);
    assertEquals([meta.sellerFeeBasisPoints, meta.creators], [0, null]);
    const treasuryAfter = await c.getBalance(h.treasury.publicKey, "confirmed");
    assertEquals(BigInt(treasuryAfter - treasuryBefore), BigInt(body.fee.lamports));
    const found = await c.getSignaturesForAddress(reference, {}, "confirmed");
    assertEquals(found.map((s) => s.signature), [sig]);

    const rec = await h.request(`/v1/tokens/${body.mint}`, { headers: bearer(apiKey) });
    assertEquals(rec.status, 200);
    const record = await rec.json();
    assertEquals(Object.keys(record).sort(), [
      "confirmedAt",
      "createdAt",
      "feeVerified",
      "mint",
      "name",
      "signature",
      "status",
      "symbol",
    ]);
    assertEquals([record.mint, record.name, record.symbol], [body.mint, "Moon Cat", "MCAT"]);
    assertEquals([record.status, record.signature, record.feeVerified], ["built", null, false]);
    assert(
      Math.abs(record.createdAt - h.services.clock() / 1000) < 60,
      `createdAt ${record.createdAt} is in seconds`,
    );

    // The watcher finds the landed transaction by the build's reference and checks it against
    // the TokenBuilt record: mint, full supply and fee all present.
    await sweepOpenBuilds(h.services);
    const done = await (await h.request(`/v1/tokens/${body.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals([done.status, done.signature, done.feeVerified], ["confirmed", sig, true]);
    assert(
      Number.isInteger(done.confirmedAt) &&
        Math.abs(done.confirmedAt - h.services.clock() / 1000) < 60,
    );
  },
);

step(
  "a payer who cuts the minted supply but pays the fee: unverified, with feeVerified true",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    const { res, body } = await build(h, apiKey, {
      payer: wallet.publicKey.toBase58(),
      name: "Short Cat",
      symbol: "SHRT",
      metadataUri: URI,
      supplyRaw: "1000",
      decimals: 0,
    });
    assertEquals(res.status, 201);
    const tx = decodeTx(body.transaction);
    // A legacy message keeps its instructions' data as base58: edit it there.
    const message = tx.message as Message;
    const mintTo = message.instructions.find((ix) =>
      message.accountKeys[ix.programIdIndex].equals(TOKEN_PROGRAM_ID) &&
      bs58.decode(ix.data)[0] === 7
    )!;
    // MintTo's data is [7, amount as u64 little-endian]: 1000 -> 999.
    const data = bs58.decode(mintTo.data);
    new DataView(data.buffer, data.byteOffset).setBigUint64(1, 999n, true);
    mintTo.data = bs58.encode(data);
    tx.sign([wallet]);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);

    const seen = await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) });
    const v = await seen.json();
    assertEquals([v.status, v.feeVerified, v.fee.amount], ["unverified", true, body.fee.lamports]);
    const record = await (await h.request(`/v1/tokens/${body.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals([record.status, record.signature, record.feeVerified], ["unverified", sig, true]);
  },
);

step(
  "options: supplyRaw, decimals 0, another recipient, mint revoked, freeze kept, immutable",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    const c = h.services.connection;
    const recipient = Keypair.generate().publicKey; // a fresh wallet with no account yet
    const { res, body } = await build(h, apiKey, {
      payer: wallet.publicKey.toBase58(),
      name: "Fixed Supply ✓",
      symbol: "FIXD",
      metadataUri: URI,
      supplyRaw: "18446744073709551615",
      decimals: 0,
      recipient: recipient.toBase58(),
      revokeMint: true,
      revokeFreeze: false,
      immutableMetadata: true,
    });
    assertEquals(res.status, 201, JSON.stringify(body));
    assertEquals(decodeTx(body.transaction).message.compiledInstructions.length, 10);
    await signAndSend(h, body.transaction, wallet);
    const mint = await getMint(c, new Key(body.mint), "confirmed");
    assertEquals([mint.decimals, mint.mintAuthority, mint.supply], [
      0,
      null,
      18446744073709551615n,
    ]);
    assertEquals(mint.freezeAuthority?.toBase58(), wallet.publicKey.toBase58());
    const ata = await getAccount(c, new Key(body.recipientTokenAccount), "confirmed");
    assertEquals([ata.owner.toBase58(), ata.amount], [recipient.toBase58(), 18446744073709551615n]);
    const meta = decodeMetadataAccount(
      (await c.getAccountInfo(new Key(body.metadataAccount), "confirmed"))!.data,
    );
    assertEquals([meta.name, meta.isMutable], ["Fixed Supply ✓", false]);
  },
);

step(
  "the contract's flow on the local default: the http metadata URL this service hosts is accepted",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    assertMatch(h.services.config.publicBaseUrl, /^http:\/\/127\.0\.0\.1:/);
    const hosted = await h.request("/v1/metadata", {
      method: "POST",
      headers: bearer(apiKey),
      json: { name: "Local Cat", symbol: "LCAT", imageBase64: toBase64(makePng(1, 1)) },
    });
    assertEquals(hosted.status, 201);
    const { metadataUri } = await hosted.json();
    const body = {
      payer: wallet.publicKey.toBase58(),
      name: "Local Cat",
      symbol: "LCAT",
      supply: "5",
    };
    const built = await build(h, apiKey, { ...body, metadataUri });
    assertEquals(built.res.status, 201, JSON.stringify(built.body));
    await signAndSend(h, built.body.transaction, wallet);
    const onChain = decodeMetadataAccount(
      (await h.services.connection.getAccountInfo(
        new Key(built.body.metadataAccount),
        "confirmed",
      ))!.data,
    );
    assertEquals(onChain.uri, metadataUri);
    // Any other http URL is still refused.
    const other = await build(h, apiKey, {
      ...body,
      metadataUri: metadataUri.replace("127.0.0.1", "example.com"),
    });
    assertEquals(other.res.status, 400);
    assertEquals(other.body.error.fields.metadataUri, "must be an absolute https URL");
  },
);

step("recipient policy on chain: PDA only if it exists; token accounts refused", async (h) => {
  const { apiKey, wallet } = await h.newApiKey();
  const base = {
    payer: wallet.publicKey.toBase58(),
    name: "Vault Coin",
    symbol: "VAULT",
    metadataUri: URI,
    supply: "1",
  };
  const pda = Key.findProgramAddressSync(
    [crypto.getRandomValues(new Uint8Array(8))],
    Keypair.generate().publicKey,
  )[0];
  const missing = await build(h, apiKey, { ...base, recipient: pda.toBase58() });
  assertEquals(missing.res.status, 400);
  assertEquals(missing.body.error.code, "invalid_request");
  assertMatch(missing.body.error.fields.recipient, /off-curve/);

  h.chain.airdrop(pda.toBase58(), 1_000_000n);
  const ok = await build(h, apiKey, { ...base, recipient: pda.toBase58() });
  assertEquals(ok.res.status, 201, JSON.stringify(ok.body));
  await signAndSend(h, ok.body.transaction, wallet);
  const ata = await getAccount(
    h.services.connection,
    new Key(ok.body.recipientTokenAccount),
    "confirmed",
  );
  assertEquals([ata.owner.toBase58(), ata.amount], [pda.toBase58(), 10n ** 9n]);

  // The ATA just created is a token account: sending supply "to" it would strand the tokens.
  const tokenAccount = await build(h, apiKey, {
    ...base,
    recipient: ok.body.recipientTokenAccount,
  });
  assertEquals(tokenAccount.res.status, 400);
  assertMatch(tokenAccount.body.error.fields.recipient, /token account/);
});

step("insufficient_funds names what is needed and what is there", async (h) => {
  const { apiKey } = await h.newApiKey();
  const poor = h.fundedWallet(0.02);
  const { res, body } = await build(h, apiKey, {
    payer: poor.publicKey.toBase58(),
    name: "Poor Coin",
    symbol: "POOR",
    metadataUri: URI,
    supply: "1",
  });
  assertEquals(res.status, 400);
  assertEquals(body.error.code, "insufficient_funds");
  assertEquals(body.error.fields.available, String(0.02 * LAMPORTS_PER_SOL));
  assertMatch(body.error.fields.needed, /^[0-9]+$/);
  assert(BigInt(body.error.fields.needed) > BigInt(body.error.fields.available));
  // fee + mint, token account and metadata rent + metadata fee + network fee + payer reserve
  assertEquals(
    BigInt(body.error.fields.needed),
    19_933_334n + 1_461_600n + 2_039_280n + 5_115_600n + 10_000_000n + 5_000n + 890_880n,
  );
  // The message says what the total is made of, the wallet's reserve included, and on the local
  // chain how to fund the wallet.
  const m = body.error.message as string;
  assert(m.includes(`the transaction spends ${body.error.fields.costs.totalLamports}`), m);
  assert(m.includes("the wallet must keep 890880 (payerReserve"), m);
  assert(m.includes(`"requestAirdrop","params":["${poor.publicKey.toBase58()}"`), m);
  assert(m.includes(h.services.connection.rpcEndpoint), m);
  // A payer that has never been funded has nothing at all.
  const none = await build(h, apiKey, {
    payer: Keypair.generate().publicKey.toBase58(),
    name: "Poor Coin",
    symbol: "POOR",
    metadataUri: URI,
    supply: "1",
  });
  assertEquals([none.body.error.code, none.body.error.fields.available], [
    "insufficient_funds",
    "0",
  ]);
});

step("every field rule is a 400 invalid_request naming the field, before any RPC", async (h) => {
  const { apiKey, wallet } = await h.newApiKey();
  const good = {
    payer: wallet.publicKey.toBase58(),
    name: "Good",
    symbol: "GOOD",
    metadataUri: URI,
    supply: "5",
  };
  const pda = Key.findProgramAddressSync([new Uint8Array([7])], Keypair.generate().publicKey)[0]
    .toBase58();
  const cases: [Record<string, unknown>, string[]][] = [
    [{ payer: undefined }, ["payer"]],
    [{ payer: "0OIl" }, ["payer"]],
    [{ payer: pda }, ["payer"]],
    [{ name: undefined }, ["name"]],
    [{ name: "x".repeat(33) }, ["name"]],
    [{ name: "é".repeat(17) }, ["name"]], // 17 characters, 34 bytes
    [{ symbol: "TOOLONGSYMB" }, ["symbol"]],
    [{ symbol: "TWO WORDS" }, ["symbol"]],
    [{ metadataUri: "http://example.com/a.json" }, ["metadataUri"]],
    [{ metadataUri: "https://example.com/" + "a".repeat(181) }, ["metadataUri"]],
    [{ supply: undefined }, ["supply", "supplyRaw"]],
    [{ supplyRaw: "5" }, ["supply", "supplyRaw"]],
    [{ supply: "1.5" }, ["supply"]],
    [{ supply: "0" }, ["supply"]],
    [{ supply: "18446744074" }, ["supply"]],
    [{ supply: undefined, supplyRaw: "18446744073709551616" }, ["supplyRaw"]],
    [{ decimals: 10 }, ["decimals"]],
    [{ decimals: "6" }, ["decimals"]],
    [{ recipient: "not an address" }, ["recipient"]],
    [{ revokeMint: "yes" }, ["revokeMint"]],
    [{ revokeFreeze: null }, ["revokeFreeze"]],
    [{ immutableMetadata: 0 }, ["immutableMetadata"]],
    [{ mintAuthority: "not an address" }, ["mintAuthority"]],
    [{ authority: good.payer }, ["authority"]], // unknown field
    [{ name: "Ѕоlаnа" }, ["name"]], // Cyrillic look-alikes
    [{ symbol: "ＵＳＤＣ" }, ["symbol"]], // fullwidth
    [{ symbol: "B\u200bONK" }, ["symbol"]], // zero-width space
    [{ name: "Jupiter", symbol: "JUP" }, ["name", "symbol"]],
  ];
  for (const [patch, fields] of cases) {
    const { res, body } = await build(h, apiKey, { ...good, ...patch });
    assertEquals(res.status, 400, JSON.stringify(patch));
    assertEquals(body.error.code, "invalid_request");
    for (const f of fields) {
      assert(
        typeof body.error.fields[f] === "string",
        `${JSON.stringify(patch)}: ${JSON.stringify(body)}`,
      );
    }
  }
  const notJson = await h.request("/v1/tokens", {
    method: "POST",
    headers: {
      ...bearer(apiKey),
      "content-type": "application/json",
      "idempotency-key": "not-json",
    },
    body: "{",
  });
  assertEquals([notJson.status, (await notJson.json()).error.code], [400, "invalid_request"]);
  // None of these counted.
  const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
  assertEquals(me.usageToday.tokens, 0);
});

step(
  "an operator's well-known-names list (admin, in KV) replaces the configured one",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    const body = {
      payer: wallet.publicKey.toBase58(),
      symbol: "ACME",
      metadataUri: URI,
      supply: "1",
    };
    await h.kv.set(WELL_KNOWN_NAMES_KEY, { names: ["Acme Corp"], updatedAt: h.services.clock() });
    try {
      const refused = await build(h, apiKey, { ...body, name: "ACМE CORP" }); // Cyrillic М
      assertEquals([refused.res.status, Object.keys(refused.body.error.fields)], [400, ["name"]]);
      assertMatch(refused.body.error.fields.name, /Acme Corp/);
    } finally {
      await h.kv.delete(WELL_KNOWN_NAMES_KEY);
    }
    const back = await build(h, apiKey, { ...body, name: "Solana" });
    assertEquals([back.res.status, Object.keys(back.body.error.fields)], [400, ["name"]]);
  },
);

step(
  "unauthorized without a valid key; a build record is only for the key that built it",
  async (h) => {
    const body = {
      payer: Keypair.generate().publicKey.toBase58(),
      name: "A",
      symbol: "A",
      metadataUri: URI,
      supply: "1",
    };
    const noKeys: Record<string, string>[] = [{}, { authorization: "Bearer tcb_live_00_nope" }, {
      authorization: "Basic x",
    }];
    for (const headers of noKeys) {
      const res = await h.request("/v1/tokens", { method: "POST", headers, json: body });
      assertEquals([res.status, (await res.json()).error.code], [401, "unauthorized"]);
    }
    const a = await h.newApiKey();
    const b = await h.newApiKey();
    const built = await build(h, a.apiKey, { ...body, payer: a.wallet.publicKey.toBase58() });
    assertEquals(built.res.status, 201);
    const mint = built.body.mint;
    const own = await h.request(`/v1/tokens/${mint}`, { headers: bearer(a.apiKey) });
    assertEquals(own.status, 200);
    const record = await own.json();
    assertEquals([record.status, record.signature, record.feeVerified, record.confirmedAt], [
      "built",
      null,
      false,
      null,
    ]);
    const other = await h.request(`/v1/tokens/${mint}`, { headers: bearer(b.apiKey) });
    const unknown = await h.request(`/v1/tokens/${Keypair.generate().publicKey.toBase58()}`, {
      headers: bearer(a.apiKey),
    });
    const otherBody = await other.json();
    assertEquals([other.status, otherBody.error.code], [404, "not_found"]);
    // Indistinguishable from a mint that does not exist.
    assertEquals(otherBody, await unknown.json());
    const bad = await h.request("/v1/tokens/not-a-mint", { headers: bearer(a.apiKey) });
    assertEquals(bad.status, 400);
    assertEquals(Object.keys((await bad.json()).error.fields), ["mint"]);
    const anon = await h.request(`/v1/tokens/${mint}`);
    assertEquals(anon.status, 401);
  },
);

step(
  "the TokenBuilt event holds the build; the CU limit is sized from the simulation",
  async (h) => {
    const { apiKey, wallet, keyId, purchaseId } = await h.newApiKey();
    // The day on both sides of the call: a build at midnight may count on either.
    const { body } = await build(h, apiKey, {
      payer: wallet.publicKey.toBase58(),
      name: "Event",
      symbol: "EVT",
      metadataUri: URI,
      supply: "42",
      decimals: 2,
    });
    const [event] = await h.services.store.readStream(`build-${body.buildId}`);
    assertEquals(event.type, "TokenBuilt");
    const d = (event as Extract<typeof event, { type: "TokenBuilt" }>).data;
    const tx = decodeTx(body.transaction);
    assertEquals(d.messageHash, await sha256Hex(tx.message.serialize()));
    assertEquals([d.keyId, d.purchaseId, d.day], [
      keyId,
      purchaseId,
      // The UTC day of the build's own moment, as the service's injected clock stamped it.
      utcDay(event.at),
    ]);
    assertEquals([d.supplyRaw, d.decimals, d.feeLamports, d.solUsd, d.feeUsd], [
      "4200",
      2,
      "19933334",
      150,
      2.99,
    ]);
    assertEquals(
      d.mint,
      (await Key.createWithSeed(wallet.publicKey, d.seed, TOKEN_PROGRAM_ID)).toBase58(),
    );
    assert(d.seed.length <= 32);
    assertEquals(d.reference, referenceOf(tx).toBase58());
    assertEquals([d.blockhash, d.lastValidBlockHeight], [
      body.recentBlockhash,
      body.lastValidBlockHeight,
    ]);
    assertEquals(d.recipient, wallet.publicKey.toBase58());

    const [limitIx, priceIx] = tx.message.compiledInstructions;
    const limit = new DataView(limitIx.data.buffer, limitIx.data.byteOffset).getUint32(1, true);
    const price = new DataView(priceIx.data.buffer, priceIx.data.byteOffset).getBigUint64(1, true);
    const sim = await h.services.connection.simulateTransaction(tx, { sigVerify: false });
    assertEquals(sim.value.err, null);
    assertEquals(limit, unitLimitFromSimulation(sim.value.unitsConsumed));
    assert(limit < 400_000, `limit ${limit}`);
    assertEquals(price, 0n); // no priority fees paid recently on this chain
  },
);

step("price_unavailable when the Pyth price is stale; nothing is counted", async (h) => {
  const { apiKey, wallet } = await h.newApiKey();
  const fixed = h.services.price;
  h.chain.pausePricePublishing(true);
  h.services.price = new PythPriceSource(
    h.services.connection,
    h.chain.pythSolUsdAccount,
    h.services.config.price.maxAgeS,
    () => h.services.clock() + 121_000,
  );
  try {
    const { res, body } = await build(h, apiKey, {
      payer: wallet.publicKey.toBase58(),
      name: "Stale",
      symbol: "STALE",
      metadataUri: URI,
      supply: "1",
    });
    assertEquals([res.status, body.error.code], [503, "price_unavailable"]);
    assertEquals(res.headers.get("retry-after"), "5");
  } finally {
    h.services.price = fixed;
    h.chain.pausePricePublishing(false);
  }
  const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
  assertEquals(me.usageToday.tokens, 0);
});

step(
  "40 parallel builds on a key with 25 left: exactly 25 succeed; the 26th is daily_limit",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    const body = {
      payer: wallet.publicKey.toBase58(),
      name: "Rush",
      symbol: "RUSH",
      metadataUri: URI,
      supply: "1",
    };
    const results = await Promise.all(Array.from({ length: 40 }, () => build(h, apiKey, body)));
    const ok = results.filter((r) => r.res.status === 201);
    const limited = results.filter((r) => r.res.status === 429);
    const odd = results.filter((r) => r.res.status !== 201 && r.res.status !== 429);
    assertEquals(odd.map((r) => JSON.stringify(r.body)), []);
    assertEquals([ok.length, limited.length], [25, 15]);
    for (const r of limited) assertEquals(r.body.error.code, "daily_limit");
    assertEquals(new Set(ok.map((r) => r.body.buildId)).size, 25);
    assertEquals(new Set(ok.map((r) => r.body.mint)).size, 25);
    const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
    assertEquals(me.usageToday.tokens, 25);

    const next = await build(h, apiKey, body);
    assertEquals([next.res.status, next.body.error.code], [429, "daily_limit"]);
    const retry = Number(next.res.headers.get("retry-after"));
    assert(retry > 0 && retry <= 86_400, `Retry-After ${retry}`);
    assertEquals(next.body.error.fields.tokensPerDay, 25);
  },
);

step(
  "Idempotency-Key: a retry replays without building or counting; other body 422; concurrent 409",
  async (h) => {
    const { apiKey, wallet } = await h.newApiKey();
    const body = {
      payer: wallet.publicKey.toBase58(),
      name: "Once",
      symbol: "ONCE",
      metadataUri: URI,
      supply: "7",
    };
    const key = { "idempotency-key": "build-once-1" };
    const first = await build(h, apiKey, body, key);
    assertEquals(first.res.status, 201);
    const again = await build(h, apiKey, body, key);
    assertEquals(again.res.status, 201);
    assertEquals(again.res.headers.get("idempotent-replayed"), "true");
    assertEquals(again.body, first.body);
    const me = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
    assertEquals(me.usageToday.tokens, 1);

    const other = await build(h, apiKey, { ...body, supply: "8" }, key);
    assertEquals([other.res.status, other.body.error.code], [422, "idempotency_key_reused"]);

    // The first request is held at its commit, so the second surely meets it in flight (two
    // requests merely started together can also run one after the other on a busy machine).
    const concurrent = { "idempotency-key": "build-once-2" };
    const hold = holdNextCommit(h.services.store);
    const firstOfPair = build(h, apiKey, body, concurrent);
    await hold.atCommit;
    const secondOfPair = await build(h, apiKey, body, concurrent);
    hold.release();
    hold.restore();
    const pair = [await firstOfPair, secondOfPair];
    assertEquals(pair.map((r) => r.res.status), [201, 409]);
    assertEquals(
      pair.find((r) => r.res.status === 409)!.body.error.code,
      "idempotency_key_in_flight",
    );
    // A refused build is replayed too, not re-run.
    const poorKey = { "idempotency-key": "build-poor" };
    const poor = { ...body, payer: Keypair.generate().publicKey.toBase58() };
    const refused = await build(h, apiKey, poor, poorKey);
    assertEquals(refused.body.error.code, "insufficient_funds");
    h.chain.airdrop(poor.payer, 10n * BigInt(LAMPORTS_PER_SOL));
    const replayed = await build(h, apiKey, poor, poorKey);
    assertEquals([replayed.res.status, replayed.body], [400, refused.body]);
    const after = await (await h.request("/v1/me", { headers: bearer(apiKey) })).json();
    assertEquals(after.usageToday.tokens, 2);
  },
);

Deno.test("POST /v1/tokens and GET /v1/tokens/{mint}", async (t) => {
  // Mid-hour: the steps compare today's usage before and after, on one day.
  const h = await startHarness(midHourHarness());
  try {
    for (const [name, fn] of steps) await t.step(name, () => fn(h));
  } finally {
    await h.close();
  }
});

Deno.test("a creation sent through the caller's own RPC is pending until confirmed, then verified", async () => {
  // Slots move only when told: the transaction stays at processed commitment until then.
  const h = await startHarness({ chain: { slotMs: "manual" } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const { res, body } = await build(h, apiKey, {
      payer: wallet.publicKey.toBase58(),
      name: "Slow Cat",
      symbol: "SLOW",
      metadataUri: URI,
      supply: "3",
    });
    assertEquals(res.status, 201);
    const tx = decodeTx(body.transaction);
    tx.sign([wallet]);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    const verify = async (signature: string) => {
      const r = await h.request(`/v1/transactions/${signature}`, { headers: bearer(apiKey) });
      return { status: r.status, body: await r.json() };
    };

    // In flight: the cluster knows it, nothing can be read at confirmed yet, so no build is named.
    const inFlight = await verify(sig);
    assertEquals(inFlight.status, 200);
    assertEquals([inFlight.body.status, inFlight.body.mint], ["pending", null]);

    h.chain.advanceSlots(1);
    const done = await verify(sig);
    assertEquals([done.body.status, done.body.mint, done.body.feeVerified], [
      "confirmed",
      body.mint,
      true,
    ]);
    // A signature the cluster never saw stays 404.
    const unknown = await verify(bs58.encode(crypto.getRandomValues(new Uint8Array(64))));
    assertEquals([unknown.status, unknown.body.error.code], [404, "not_found"]);
  } finally {
    await h.close();
  }
});

Deno.test("with priority fees on the chain, insufficient_funds names the whole need: topping up to it builds", async () => {
  // Slots move only when told, so the bids below fill most of the fee market's recent slots.
  const h = await startHarness({ chain: { slotMs: "manual" } });
  try {
    const { apiKey, keyId } = await h.newApiKey();
    const c = h.services.connection;
    // Others pay 50,000 micro-lamports a unit to write the treasury, slot after slot, until that
    // is the fee market's 75th percentile for the accounts a build writes.
    const bidder = h.fundedWallet(1);
    for (let i = 1; i <= 200; i++) {
      const { blockhash } = await c.getLatestBlockhash("confirmed");
      const bid = new Transaction({ feePayer: bidder.publicKey, recentBlockhash: blockhash }).add(
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 50_000 }),
        SystemProgram.transfer({
          fromPubkey: bidder.publicKey,
          toPubkey: h.treasury.publicKey,
          lamports: 1_000_000 + i,
        }),
      );
      bid.sign(bidder);
      await c.sendRawTransaction(bid.serialize());
      h.chain.advanceSlots(1);
      const fees = await c.getRecentPrioritizationFees({
        lockedWritableAccounts: [h.treasury.publicKey],
      });
      if (priorityPrice(fees, 1_000_000) === 50_000n) break;
    }

    // A lamport more than everything but the priority fee (and short of the reserve).
    const poor = Keypair.generate();
    const fixed = 19_933_334n + 1_461_600n + 2_039_280n + 5_115_600n + 10_000_000n + 5_000n;
    h.chain.airdrop(poor.publicKey.toBase58(), fixed + 1n);
    const body = {
      payer: poor.publicKey.toBase58(),
      name: "Bid Cat",
      symbol: "BID",
      metadataUri: URI,
      supply: "1",
    };
    const refused = await build(h, apiKey, body);
    assertEquals(refused.body.error.code, "insufficient_funds");
    const needed = BigInt(refused.body.error.fields.needed);
    const priorityFee = BigInt(refused.body.error.fields.breakdown.priorityFee);
    assert(priorityFee > 0n, JSON.stringify(refused.body));
    assertEquals(needed, fixed + priorityFee + 890_880n);
    assertEquals(refused.body.error.fields.costs.totalLamports, String(fixed + priorityFee));

    // Exactly the spend, priority fee included: the simulation (without the priority fee) leaves
    // it a balance below the rent-exempt minimum, yet the transaction handed out spends to 0.
    // Compute use (so the priority fee) depends on the mint: one seed, so one mint, for both.
    const exact = Keypair.generate();
    h.chain.airdrop(exact.publicKey.toBase58(), fixed + 1n);
    const seed = newSeed();
    const caller = (await h.kv.get<KeyDoc>(projectionKey("key", [keyId]))).value!;
    const exactRequest: BuildRequest = {
      payer: exact.publicKey,
      recipient: exact.publicKey,
      name: "Bid Cat",
      symbol: "BID",
      metadataUri: URI,
      decimals: 9,
      supplyRaw: 10n ** 9n,
      revokeMint: false,
      revokeFreeze: true,
      immutableMetadata: false,
    };
    let total = 0n;
    try {
      await buildToken(h.services, caller, exactRequest, { seed });
    } catch (e) {
      total = BigInt(((e as ApiError).fields.costs as { totalLamports: string }).totalLamports);
    }
    assert(total > fixed, String(total));
    h.chain.airdrop(exact.publicKey.toBase58(), total - fixed - 1n);
    const exactBuild = await buildToken(h.services, caller, exactRequest, { seed });
    assertEquals(exactBuild.costs.totalLamports, String(total));
    assert(BigInt(exactBuild.costs.priorityFeeLamports) > 0n);
    await signAndSend(h, exactBuild.transaction, exact);
    assertEquals(await c.getBalance(exact.publicKey, "confirmed"), 0);

    // Top up to exactly what was named: it builds, and the transaction lands.
    h.chain.airdrop(poor.publicKey.toBase58(), needed - fixed - 1n);
    const built = await build(h, apiKey, body);
    assertEquals(built.res.status, 201, JSON.stringify(built.body));
    await signAndSend(h, built.body.transaction, poor);
    // Sized again at the second build (its own simulation and fee market), never above the first.
    assert(BigInt(await c.getBalance(poor.publicKey, "confirmed")) >= 890_880n);
  } finally {
    await h.close();
  }
});
