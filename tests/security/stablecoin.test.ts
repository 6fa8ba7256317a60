/**
 * Stablecoin facts come from the chain: the mint's owner program (SPL Token or Token-2022) and its
 * decimals are read at start; a missing mint or disagreeing STABLECOIN_DECIMALS stops the start
 * with a message naming it; the payment goes through the mint's own token program. All on the
 * embedded chain with real token programs.
 */
import { Connection, Keypair, PublicKey, Transaction } from "@solana/web3.js";
import {
  getAccount,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { bootstrap } from "../../src/bootstrap.ts";
import { startChain } from "../../src/chain/mod.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/kernel/logger.ts";
import { FixedPriceSource } from "../../src/pricing/price-source.ts";
import {
  createTestMint,
  fundLocalStablecoin,
  fundTestMint,
  localStablecoinKeys,
} from "../../src/chain/local-stablecoin.ts";
import { appClient } from "../support/app-client.ts";
import { paymentInstructions } from "../../src/domain/access/payment.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The service booted on `chainUrl` with `env`; null and the error when it refuses to start. */
async function boot(chainUrl: string, env: Record<string, string>) {
  const kv = await Deno.openKv(":memory:");
  const treasury = Keypair.generate();
  try {
    const booted = await bootstrap(
      loadConfig({
        SOLANA_RPC_URL: chainUrl,
        KEY_PEPPER: "test-pepper-0123456789abcdef0123456789",
        TREASURY_ADDRESS: treasury.publicKey.toBase58(),
        LOG_LEVEL: "silent",
        ...env,
      }),
      { kv, logger: memoryLogger(), price: new FixedPriceSource(150, Date.now) },
    );
    return { booted, kv, treasury };
  } catch (e) {
    kv.close();
    throw e;
  }
}

/** Buys access in the stablecoin with a wallet holding `mint`; returns the treasury's receipt. */
async function buyInStablecoin(
  b: Awaited<ReturnType<typeof boot>>,
  wallet: Keypair,
  programId: PublicKey,
) {
  const client = appClient(b.booted, b.booted.services.config.publicBaseUrl);
  const cookie = await client.signIn(wallet);
  const res = await client.portal(cookie, "/portal/api/purchases", { currency: "STABLECOIN" });
  assertEquals(res.status, 201);
  const quote = await res.json();
  const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
  tx.partialSign(wallet);
  const sig = await b.booted.services.connection.sendRawTransaction(tx.serialize());
  await client.waitForConfirmation(sig);
  const check =
    await (await client.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {}))
      .json();
  const mint = b.booted.services.stablecoin!.mint;
  const ata = getAssociatedTokenAddressSync(mint, b.treasury.publicKey, true, programId);
  const held = await getAccount(b.booted.services.connection, ata, "confirmed", programId);
  return { quote, check, held: held.amount, cookie, client };
}

Deno.test("given STABLECOIN_MINT=local on the embedded chain, the service creates a 6-decimal mint, dev:key-style funding pays, and the key works", async () => {
  const h = await startHarness({ env: { STABLECOIN_MINT: "local" } });
  try {
    const { mint } = await localStablecoinKeys();
    const coin = h.services.stablecoin!;
    assertEquals(coin.mint.toBase58(), mint.publicKey.toBase58());
    assertEquals([coin.decimals, coin.programId.toBase58()], [6, TOKEN_PROGRAM_ID.toBase58()]);
    const wallet = h.fundedWallet();
    await fundLocalStablecoin(h.services.connection, wallet.publicKey, 50_000_000n);
    const b = { booted: h, kv: h.kv, treasury: h.treasury };
    const { quote, check, held, cookie } = await buyInStablecoin(b, wallet, TOKEN_PROGRAM_ID);
    assertEquals(quote.amount, "10000000"); // USD 10 at the mint's 6 decimals
    assertEquals([check.status, check.received], ["paid", "10000000"]);
    assertEquals(held, 10_000_000n);
    const key = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(key.status, 201);
    const { apiKey } = await key.json();
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("given a Token-2022 stablecoin with 2 decimals, the quote uses the mint's decimals and the payment goes through Token-2022", async () => {
  const chain = await startChain({ port: 0, slotMs: 40, quiet: true });
  const connection = new Connection(chain.url, "confirmed");
  const mint = Keypair.generate();
  const authority = Keypair.generate();
  try {
    await createTestMint(connection, {
      mint,
      authority,
      decimals: 2,
      programId: TOKEN_2022_PROGRAM_ID,
    });
    const b = await boot(chain.url, { STABLECOIN_MINT: mint.publicKey.toBase58() });
    try {
      const coin = b.booted.services.stablecoin!;
      assertEquals([coin.decimals, coin.programId.toBase58()], [
        2,
        TOKEN_2022_PROGRAM_ID.toBase58(),
      ]);
      const wallet = Keypair.generate();
      chain.airdrop(wallet.publicKey.toBase58(), 1_000_000_000n);
      await fundTestMint(connection, {
        mint: mint.publicKey,
        authority,
        decimals: 2,
        owner: wallet.publicKey,
        units: 5_000n,
        programId: TOKEN_2022_PROGRAM_ID,
      });
      const { quote, check, held } = await buyInStablecoin(b, wallet, TOKEN_2022_PROGRAM_ID);
      assertEquals(quote.amount, "1000"); // USD 10.00
      assertEquals(check.status, "paid");
      assertEquals(held, 1_000n);
    } finally {
      await b.booted.close();
      b.kv.close();
    }
  } finally {
    await chain.close();
  }
});

Deno.test("a missing mint, an account that is no mint, or STABLECOIN_DECIMALS that disagrees stops the start naming it", async () => {
  const chain = await startChain({ port: 0, slotMs: 40, quiet: true });
  const connection = new Connection(chain.url, "confirmed");
  try {
    const mint = Keypair.generate();
    await createTestMint(connection, { mint, authority: Keypair.generate(), decimals: 6 });
    const missing = Keypair.generate().publicKey.toBase58();
    const e1 = await assertRejects(
      () => boot(chain.url, { STABLECOIN_MINT: missing }),
      ConfigError,
    );
    assert(e1.message.includes(`STABLECOIN_MINT: ${missing} does not exist`), e1.message);

    const wallet = Keypair.generate();
    chain.airdrop(wallet.publicKey.toBase58(), 1_000_000n);
    const e2 = await assertRejects(
      () => boot(chain.url, { STABLECOIN_MINT: wallet.publicKey.toBase58() }),
      ConfigError,
    );
    assert(e2.message.includes("not the SPL Token or Token-2022 program"), e2.message);

    const e3 = await assertRejects(
      () =>
        boot(chain.url, { STABLECOIN_MINT: mint.publicKey.toBase58(), STABLECOIN_DECIMALS: "2" }),
      ConfigError,
    );
    assert(
      e3.message.includes(
        `STABLECOIN_DECIMALS: 2, but the mint ${mint.publicKey.toBase58()} has 6`,
      ),
      e3.message,
    );
    // Agreeing decimals start.
    const ok = await boot(chain.url, {
      STABLECOIN_MINT: mint.publicKey.toBase58(),
      STABLECOIN_DECIMALS: "6",
    });
    assertEquals(ok.booted.services.stablecoin!.decimals, 6);
    await ok.booted.close();
    ok.kv.close();
  } finally {
    await chain.close();
  }
});

Deno.test("STABLECOIN_MINT=local is refused off localnet", () => {
  const e = (() => {
    try {
      loadConfig({
        STABLECOIN_MINT: "local",
        NETWORK: "devnet",
        PUBLIC_BASE_URL: "https://tokens.example.test",
      });
    } catch (e) {
      return e as Error;
    }
  })();
  assert(e instanceof ConfigError && e.message.includes("STABLECOIN_MINT"), String(e));
});

Deno.test("deno task dev:key --stablecoin funds the wallet with the local test stablecoin and pays in it", async () => {
  const h = await startHarness({ env: { STABLECOIN_MINT: "local" } });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-dev-key-" });
  try {
    const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "dev:key", "--stablecoin"],
      cwd: ROOT,
      env: { NO_COLOR: "1", SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    const printed = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    assertEquals((await h.request("/v1/me", { headers: bearer(printed.apiKey) })).status, 200);
    const coin = h.services.stablecoin!;
    const treasuryAta = getAssociatedTokenAddressSync(coin.mint, h.treasury.publicKey, true);
    const held = await getAccount(h.services.connection, treasuryAta, "confirmed");
    assertEquals(held.amount, 10_000_000n);
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task start with a STABLECOIN_MINT that is not on the chain exits 2 naming it", async () => {
  const chain = await startChain({ port: 0, slotMs: 40, quiet: true });
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-stablecoin-" });
  try {
    const missing = Keypair.generate().publicKey.toBase58();
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "--unstable-cron", "src/main.ts"],
      cwd: ROOT,
      env: {
        NO_COLOR: "1",
        DATA_DIR: dataDir,
        PORT: "0",
        SOLANA_RPC_URL: chain.url,
        STABLECOIN_MINT: missing,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 2, stderr);
    assert(stderr.includes(`STABLECOIN_MINT: ${missing} does not exist on this chain`), stderr);
    assert(!new TextDecoder().decode(out.stdout).includes("ready on"), "it never served");
  } finally {
    await chain.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a stablecoin payment short of the quote (a hand-built transfer) is underpaid by the rest; the top-up pays it", async () => {
  const h = await startHarness({ env: { STABLECOIN_MINT: "local" } });
  try {
    const coin = h.services.stablecoin!;
    const wallet = h.fundedWallet();
    await fundLocalStablecoin(h.services.connection, wallet.publicKey, 50_000_000n);
    const cookie = await h.signIn(wallet);
    const quote = await (await h.portal(cookie, "/portal/api/purchases", {
      currency: "STABLECOIN",
    })).json();
    assertEquals(quote.amount, "10000000");
    // The wallet pays 9 of the 10 tokens, with the portal's own instruction shape.
    const short = new Transaction().add(...paymentInstructions({
      wallet: wallet.publicKey,
      treasury: h.treasury.publicKey,
      currency: "STABLECOIN",
      amount: 9_000_000n,
      reference: new PublicKey(quote.reference),
      stablecoin: coin,
    }));
    short.feePayer = wallet.publicKey;
    short.recentBlockhash = (await h.services.connection.getLatestBlockhash()).blockhash;
    short.sign(wallet);
    await h.waitForConfirmation(await h.services.connection.sendRawTransaction(short.serialize()));
    const check =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals([check.status, check.received, check.shortfall], [
      "underpaid",
      "9000000",
      "1000000",
    ]);
    assertEquals(check.receivedLamports, undefined, "no lamports for a stablecoin");

    const top =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/top-up`, {}))
        .json();
    assertEquals(top.amount, "1000000");
    const tx = Transaction.from(Uint8Array.from(atob(top.transaction), (c) => c.charCodeAt(0)));
    tx.partialSign(wallet);
    await h.waitForConfirmation(await h.services.connection.sendRawTransaction(tx.serialize()));
    const paid =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals([paid.status, paid.received], ["paid", "10000000"]);
    const ata = getAssociatedTokenAddressSync(coin.mint, h.treasury.publicKey, true);
    assertEquals((await getAccount(h.services.connection, ata, "confirmed")).amount, 10_000_000n);
  } finally {
    await h.close();
  }
});
