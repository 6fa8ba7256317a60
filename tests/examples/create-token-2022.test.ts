/**
 * The integrator example with Token-2022, a transfer fee and a vanity address, end to end over
 * HTTP on the embedded chain; its review decodes the Token-2022 instructions and refuses a
 * transfer fee or a program it was not asked for.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng } from "../metadata/image/fixtures.ts";
import { PublicKey, Transaction } from "@solana/web3.js";
import { getMint, getTransferFeeConfig, TOKEN_2022_PROGRAM_ID } from "@solana/spl-token";
import { createToken, reviewTransaction } from "../../examples/create-token.ts";

Deno.test("examples/create-token.ts creates a Token-2022 token with a transfer fee and a vanity address", async () => {
  const h = await startHarness({ env: { PUBLIC_BASE_URL: "https://tokens.example.test" } });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, h.app.fetch);
  try {
    const wallet = h.fundedWallet(5);
    const { apiKey } = await h.newApiKey(wallet);
    const lines: string[] = [];
    const result = await createToken({
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      apiKey,
      payer: wallet,
      name: "Example 2022",
      symbol: "EX22",
      supply: "1000",
      decimals: 6,
      imageBytes: makePng(16, 16),
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 100, maximum: "1000000" },
      vanity: { suffix: "ex", ignoreCase: true },
      expectTreasury: h.treasury.publicKey.toBase58(),
      log: (l) => lines.push(l),
      verifyTimeoutMs: 30_000,
    });
    const out = lines.join("\n");
    assertEquals(result.verification.status, "confirmed", out);
    assertEquals(result.verification.feeVerified, true);
    assert(result.mint.toLowerCase().endsWith("ex"), result.mint);
    for (
      const re of [
        /vanity address after \d+ tries/,
        /Token-2022: metadata pointer to \w+, authority \w+/,
        /Token-2022: transfer fee 100 basis points, at most 1000000 base units/,
        /Token-2022: initialize mint, 6 decimals/,
        /Token-2022: metadata in the mint: name "Example 2022", symbol "EX22", uri https:\/\/tokens\.example\.test\/m\//,
        /no metadata account, no metadata-program fee/,
      ]
    ) assertMatch(out, re);
    // The review's rent line is the build's costs: the mint (metadata included) and the token
    // account, nothing for a metadata account.
    const c = result.costs;
    const rent = BigInt(c.mintRentLamports) + BigInt(c.tokenAccountRentLamports);
    assertEquals([c.metadataRentLamports, c.metadataProtocolFeeLamports], ["0", "0"]);
    assertMatch(out, new RegExp(`rent from your wallet: about ${Number(rent) / 1e9}0* SOL`));
    const mint = await getMint(
      h.services.connection,
      new PublicKey(result.mint),
      "confirmed",
      TOKEN_2022_PROGRAM_ID,
    );
    assertEquals(getTransferFeeConfig(mint)!.newerTransferFee.transferFeeBasisPoints, 100);

    // The review refuses a transfer fee other than the one asked for, or none asked for.
    const res = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: {
        payer: wallet.publicKey.toBase58(),
        name: "Fee Check",
        symbol: "FEE",
        metadataUri: "https://tokens.example.test/m/x.json",
        supply: "5",
        decimals: 0,
        tokenProgram: "token-2022",
        transferFee: { basisPoints: 500, maximum: "7", permanent: true },
        immutableMetadata: true,
      },
    });
    const build = await res.json();
    assertEquals(res.status, 201, JSON.stringify(build));
    const tx = () =>
      Transaction.from(Uint8Array.from(atob(build.transaction), (c) => c.charCodeAt(0)));
    const want = {
      payer: wallet.publicKey.toBase58(),
      mint: build.mint,
      supplyRaw: 5n,
      feeLamports: BigInt(build.fee.lamports),
      treasury: h.treasury.publicKey.toBase58(),
      revokeMint: false,
      tokenProgram: "token-2022" as const,
      transferFee: { basisPoints: 500, maximum: 7n, authority: null },
    };
    const ok = reviewTransaction(tx(), want);
    assertEquals(ok.problems, []);
    assertMatch(ok.lines.join("\n"), /metadata update authority to none \(immutable\)/);
    assertMatch(
      reviewTransaction(tx(), { ...want, transferFee: { ...want.transferFee, maximum: 8n } })
        .problems.join("\n"),
      /sets a transfer fee you did not ask for/,
    );
    assertMatch(
      reviewTransaction(tx(), { ...want, transferFee: null }).problems.join("\n"),
      /sets a transfer fee you did not ask for/,
    );
    assertMatch(
      reviewTransaction(tx(), { ...want, tokenProgram: "spl-token", transferFee: null }).problems
        .join("\n"),
      /uses Token-2022, and you asked for the classic token program/,
    );
  } finally {
    await server.shutdown();
    await h.close();
  }
});
