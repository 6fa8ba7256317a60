/**
 * mintAuthority, freezeAuthority and updateAuthority on the build: each handed to another address
 * in the creating transaction (the supply minted first), one signer still; conflicts with the
 * revokes named; an off-curve address with no account refused as for recipients. On the emulated
 * and on the real Token Metadata program (skipped cleanly without its binary).
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import {
  getMetadataPointerState,
  getMint,
  getTokenMetadata,
  getTransferFeeConfig,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { METADATA_PROGRAM_MODES, needsMetaplexSo } from "../support/metaplex-fixture.ts";
import { decodeMetadataAccount } from "../../src/solana/token-metadata.ts";

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function build(h: Harness, apiKey: string, payer: Keypair, extra: Record<string, unknown>) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: payer.publicKey.toBase58(),
      name: "Team Token",
      symbol: "TEAM",
      metadataUri: "https://example.com/m/team.json",
      supply: "500",
      decimals: 3,
      ...extra,
    },
  });
  return { status: res.status, body: await res.json() };
}

for (const { mode, so } of METADATA_PROGRAM_MODES) {
  Deno.test({
    name: `authorities handed to other addresses in the creating transaction (${mode} Token ` +
      `Metadata program)`,
    ...(mode === "real" ? needsMetaplexSo() : {}),
    fn: async () => {
      const h = await startHarness({ chain: { tokenMetadataProgramSo: so } });
      try {
        const c = h.services.connection;
        const { apiKey, wallet } = await h.newApiKey();
        const [mintTo, freezeTo, updateTo] = [0, 1, 2].map(() => Keypair.generate().publicKey);
        const built = await build(h, apiKey, wallet, {
          mintAuthority: mintTo.toBase58(),
          freezeAuthority: freezeTo.toBase58(),
          updateAuthority: updateTo.toBase58(),
        });
        assertEquals(built.status, 201, JSON.stringify(built.body));
        const tx = decodeTx(built.body.transaction);
        // One signer: the payer.
        assertEquals(tx.message.header.numRequiredSignatures, 1);
        tx.sign([wallet]);
        const sent = await h.request("/v1/transactions", {
          method: "POST",
          headers: bearer(apiKey),
          json: { transaction: b64(tx.serialize()) },
        });
        const { signature } = await sent.json();
        assertEquals(sent.status, 202);
        await h.waitForConfirmation(signature);

        const mint = await getMint(c, new PublicKey(built.body.mint), "confirmed");
        assertEquals([mint.mintAuthority?.toBase58(), mint.freezeAuthority?.toBase58()], [
          mintTo.toBase58(),
          freezeTo.toBase58(),
        ]);
        assertEquals(mint.supply, 500_000n);
        const meta = await c.getAccountInfo(new PublicKey(built.body.metadataAccount), "confirmed");
        assertEquals(decodeMetadataAccount(meta!.data).updateAuthority, updateTo.toBase58());

        const v = await (await h.request(`/v1/transactions/${signature}`, {
          headers: bearer(apiKey),
        })).json();
        assertEquals([v.status, v.feeVerified], ["confirmed", true]);
        const rec = await (await h.request(`/v1/tokens/${built.body.mint}`, {
          headers: bearer(apiKey),
        })).json();
        assertEquals([rec.mintAuthority, rec.freezeAuthority, rec.updateAuthority], [
          mintTo.toBase58(),
          freezeTo.toBase58(),
          updateTo.toBase58(),
        ]);
      } finally {
        await h.close();
      }
    },
  });
}

Deno.test("authorities: conflicts with the revokes are named, an off-curve address with no account is refused", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const someone = Keypair.generate().publicKey.toBase58();
    const both = await build(h, apiKey, wallet, {
      mintAuthority: someone,
      revokeMint: true,
      freezeAuthority: someone,
      revokeFreeze: true,
    });
    assertEquals(both.status, 400);
    assertEquals(Object.keys(both.body.error.fields).sort(), [
      "freezeAuthority",
      "mintAuthority",
      "revokeFreeze",
      "revokeMint",
    ]);
    assertMatch(both.body.error.fields.mintAuthority, /conflicts with revokeMint/);

    // A freeze authority handed over needs no revokeFreeze: false (its default gives way).
    const freeze = await build(h, apiKey, wallet, { freezeAuthority: someone });
    assertEquals(freeze.status, 201, JSON.stringify(freeze.body));
    // A refresh re-issues the same instructions, the authority handed over included.
    const refreshed = await (await h.request(`/v1/tokens/${freeze.body.mint}/refresh`, {
      method: "POST",
      headers: bearer(apiKey),
    })).json();
    const ixs = (t: string) => JSON.stringify(decodeTx(t).message.compiledInstructions);
    assertEquals(ixs(refreshed.transaction), ixs(freeze.body.transaction));

    // An off-curve address (a PDA) with nothing at it: a typo would give the token away.
    const [pda] = PublicKey.findProgramAddressSync(
      [new TextEncoder().encode("nobody")],
      h.treasury.publicKey,
    );
    const typo = await build(h, apiKey, wallet, { updateAuthority: pda.toBase58() });
    assertEquals([typo.status, Object.keys(typo.body.error.fields)], [400, ["updateAuthority"]]);
    assertMatch(typo.body.error.fields.updateAuthority, /off-curve address/);
    // Once an account lives there (a funded vault), it is accepted.
    h.chain.airdrop(pda.toBase58(), 1_000_000_000n);
    assertEquals((await build(h, apiKey, wallet, { updateAuthority: pda.toBase58() })).status, 201);

    const bad = await build(h, apiKey, wallet, { freezeAuthority: "nope" });
    assertEquals([bad.status, Object.keys(bad.body.error.fields)], [400, ["freezeAuthority"]]);
  } finally {
    await h.close();
  }
});

Deno.test("authorities on a Token-2022 mint: mint and freeze, the metadata's update authority and its pointer's", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const [mintTo, freezeTo, updateTo, feeTo] = [0, 1, 2, 3].map(() =>
      Keypair.generate().publicKey
    );
    // Permanent and handed over at once: named.
    const both = await build(h, apiKey, wallet, {
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 50, maximum: "1000", permanent: true, authority: feeTo },
    });
    assertEquals([both.status, Object.keys(both.body.error.fields)], [400, [
      "transferFee.authority",
    ]]);
    // An off-curve fee authority with no account: refused like any other handed authority.
    const [pda] = PublicKey.findProgramAddressSync([new Uint8Array([7])], h.treasury.publicKey);
    const typo = await build(h, apiKey, wallet, {
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 50, maximum: "1000", authority: pda.toBase58() },
    });
    assertEquals([typo.status, Object.keys(typo.body.error.fields)], [400, [
      "transferFee.authority",
    ]]);
    const built = await build(h, apiKey, wallet, {
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 50, maximum: "1000", authority: feeTo.toBase58() },
      mintAuthority: mintTo.toBase58(),
      freezeAuthority: freezeTo.toBase58(),
      updateAuthority: updateTo.toBase58(),
    });
    assertEquals(built.status, 201, JSON.stringify(built.body));
    const tx = decodeTx(built.body.transaction);
    assertEquals(tx.message.header.numRequiredSignatures, 1);
    tx.sign([wallet]);
    const sent = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: { transaction: b64(tx.serialize()) },
    });
    const { signature } = await sent.json();
    assertEquals(sent.status, 202);
    await h.waitForConfirmation(signature);
    const mintKey = new PublicKey(built.body.mint);
    const mint = await getMint(c, mintKey, "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals([mint.mintAuthority?.toBase58(), mint.freezeAuthority?.toBase58(), mint.supply], [
      mintTo.toBase58(),
      freezeTo.toBase58(),
      500_000n,
    ]);
    const meta = await getTokenMetadata(c, mintKey, "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals(meta?.updateAuthority?.toBase58(), updateTo.toBase58());
    assertEquals(getMetadataPointerState(mint)?.authority?.toBase58(), updateTo.toBase58());
    const fee = getTransferFeeConfig(mint);
    assertEquals(
      [fee?.transferFeeConfigAuthority.toBase58(), fee?.withdrawWithheldAuthority.toBase58()],
      [feeTo.toBase58(), feeTo.toBase58()],
    );
    const v = await (await h.request(`/v1/transactions/${signature}`, {
      headers: bearer(apiKey),
    })).json();
    assertEquals([v.status, v.feeVerified], ["confirmed", true]);
  } finally {
    await h.close();
  }
});
