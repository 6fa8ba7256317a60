/**
 * The integrator example, run end to end over HTTP against the service on the embedded chain:
 * host metadata, build, review, sign with a Solana CLI keypair file, relay, verify.
 */
import { assert, assertEquals, assertMatch, assertRejects } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng } from "../metadata/image/fixtures.ts";
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from "@solana/web3.js";
import { createToken, loadKeypair, reviewTransaction } from "../../examples/create-token.ts";

const NEEDED = [
  ["POST", "/v1/metadata"],
  ["POST", "/v1/tokens"],
  ["POST", "/v1/transactions"],
  ["GET", "/v1/transactions/1111111111111111111111111111111111111111111111111111111111111111"],
];

Deno.test("examples/create-token.ts creates a token end to end and refuses a doctored transaction", async () => {
  const h = await startHarness({ env: { PUBLIC_BASE_URL: "https://tokens.example.test" } });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, h.app.fetch);
  const dir = await Deno.makeTempDir({ prefix: "tcb-example-" });
  try {
    const wallet = h.fundedWallet(5);
    const { apiKey } = await h.newApiKey(wallet);

    // The endpoints the example drives are written by other people; until they exist it can't run.
    const absent = [];
    for (const [method, path] of NEEDED) {
      const res = await h.request(path, {
        method,
        headers: bearer(apiKey),
        json: method === "POST" ? {} : undefined,
      });
      const body = await res.json().catch(() => null);
      if (res.status === 404 && body?.error?.message === "No such endpoint") {
        absent.push(`${method} ${path}`);
      }
    }
    if (absent.length) {
      console.warn(`SKIPPED: examples/create-token.ts needs ${absent.join(", ")}, not served yet`);
      return;
    }

    const keypairPath = `${dir}/payer.json`;
    await Deno.writeTextFile(keypairPath, JSON.stringify(Array.from(wallet.secretKey)));
    const payer = await loadKeypair(keypairPath);
    assertEquals(payer.publicKey.toBase58(), wallet.publicKey.toBase58());

    const lines: string[] = [];
    let reviewed = false;
    const before = BigInt(await h.services.connection.getBalance(wallet.publicKey, "confirmed"));
    const result = await createToken({
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      apiKey,
      payer,
      name: "Example Token",
      symbol: "EXT",
      supply: "1000000",
      decimals: 6,
      description: "made by the example",
      imageBytes: makePng(16, 16),
      revokeMint: true,
      expectTreasury: h.treasury.publicKey.toBase58(),
      confirm: (r) => {
        reviewed = r.problems.length === 0;
        return true;
      },
      log: (l) => lines.push(l),
      verifyTimeoutMs: 30_000,
    });
    assert(reviewed);
    assertMatch(result.metadataUri, /^https:\/\/tokens\.example\.test\/m\/[0-9a-f]+\.json$/);
    assertEquals(result.verification.status, "confirmed", lines.join("\n"));
    assertEquals(result.verification.feeVerified, true);
    assertEquals(result.verification.supplyRaw, "1000000000000");
    assertEquals(result.verification.mint, result.mint);

    const out = lines.join("\n");
    for (
      const re of [
        /ComputeBudget: unit limit \d+/,
        /System: fund mint account \w+ with its rent 0\.001461600 SOL/,
        /System: allocate mint account \w+ \(82 bytes, owner TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA\)/,
        /Token: initialize mint, 6 decimals, mint authority \w+, freeze authority none/,
        /AssociatedToken: create the recipient's token account/,
        /Token: mint 1000000000000 base units to \w+/,
        /TokenMetadata: create metadata name "Example Token", symbol "EXT", uri https:\/\/tokens\.example\.test\/m\//,
        /Token: set MintTokens authority to none \(revoked\)/,
        new RegExp(`fee to treasury ${h.treasury.publicKey.toBase58()}: 0\\.019933334 SOL`),
      ]
    ) assertMatch(out, re);
    // What the review announces is what the payer's balance lost besides the fee and the one
    // signature (no priority fee on this chain).
    const after = BigInt(await h.services.connection.getBalance(wallet.publicKey, "confirmed"));
    const announced = /rent and metadata costs from your wallet: about ([0-9.]+) SOL/.exec(out)!;
    assertEquals(
      BigInt(Math.round(Number(announced[1]) * LAMPORTS_PER_SOL)),
      before - after - 19_933_334n - 5_000n,
    );

    const record = await (await h.request(`/v1/tokens/${result.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals(record.status, "confirmed");
    assertEquals(record.signature, result.signature);

    // A transaction with one more transfer, or a fee to someone else, is never signed.
    const buildRes = await h.request("/v1/tokens", {
      method: "POST",
      headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
      json: {
        payer: payer.publicKey.toBase58(),
        // A build pointing at our hosted document carries its name and symbol.
        name: "Example Token",
        symbol: "EXT",
        metadataUri: result.metadataUri,
        supply: "5",
        decimals: 0,
      },
    });
    const build = await buildRes.json();
    assertEquals(buildRes.status, 201, JSON.stringify(build));
    const tx = Transaction.from(Uint8Array.from(atob(build.transaction), (c) => c.charCodeAt(0)));
    const want = {
      payer: payer.publicKey.toBase58(),
      mint: build.mint,
      supplyRaw: 5n,
      feeLamports: BigInt(build.fee.lamports),
      treasury: h.treasury.publicKey.toBase58(),
      revokeMint: false,
    };
    assertEquals(reviewTransaction(tx, want).problems, []);
    const thief = Keypair.generate().publicKey;
    tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: thief, lamports: 1 }));
    assertMatch(
      reviewTransaction(tx, want).problems.join("\n"),
      /transfers SOL to \w+, which is not the treasury/,
    );
    const elsewhere = reviewTransaction(
      Transaction.from(Uint8Array.from(atob(build.transaction), (c) => c.charCodeAt(0))),
      {
        ...want,
        treasury: thief.toBase58(),
      },
    );
    assertMatch(
      elsewhere.problems.join("\n"),
      /expected one fee transfer to the treasury, found 0/,
    );
    assertMatch(
      reviewTransaction(
        Transaction.from(Uint8Array.from(atob(build.transaction), (c) => c.charCodeAt(0))),
        {
          ...want,
          supplyRaw: 6n,
        },
      ).problems.join("\n"),
      /mints 5 base units, asked for 6/,
    );

    // The example stops before signing when its checks fail.
    await assertRejects(
      () =>
        createToken({
          baseUrl: `http://127.0.0.1:${server.addr.port}`,
          apiKey,
          payer,
          name: "Third",
          symbol: "THR",
          supply: "1",
          imageBytes: makePng(8, 8),
          expectTreasury: thief.toBase58(),
          log: () => {},
        }),
      Error,
      "refusing to sign",
    );
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dir, { recursive: true });
  }
});
