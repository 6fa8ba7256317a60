/**
 * POST /v1/tokens/{mint}/update on the embedded chain: a token created through the service,
 * signed and landed, then updated by its current authority, each update signed and landed and
 * read back: a new hosted document (its name and symbol), the update authority handed over, the
 * metadata made immutable, the mint authority revoked; the refusals named before anything is
 * built; Token-2022 with a longer uri, landing only because of the rent top-up; costs exact to
 * the lamport; a fee when UPDATE_FEE_USD is set. On the emulated and on the real Token Metadata
 * program (skipped cleanly without its binary).
 */
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import { getMint, getTokenMetadata, TOKEN_2022_PROGRAM_ID } from "@solana/spl-token";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, startHarness } from "../support/harness.ts";
import { METADATA_PROGRAM_MODES, needsMetaplexSo } from "../support/metaplex-fixture.ts";
import { decodeMetadataAccount, metadataPda } from "../../src/solana/token-metadata.ts";
import { createToken, hostDocument, land, update } from "../support/token-update-flow.ts";
import { startReceiver } from "../integrators/receiver.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { allProjections } from "../../projections/index.ts";
import type { Config } from "../../src/config.ts";

for (const { mode, so } of METADATA_PROGRAM_MODES) {
  Deno.test({
    name: `update: uri from a hosted document, update authority handed over, immutable, mint ` +
      `authority revoked, refusals (${mode} Token Metadata program)`,
    ...(mode === "real" ? needsMetaplexSo() : {}),
    fn: async () => {
      const h = await startHarness({ chain: { tokenMetadataProgramSo: so } });
      try {
        const c = h.services.connection;
        const { apiKey, wallet } = await h.newApiKey();
        const mint = await createToken(h, apiKey, wallet);
        const meta = async () =>
          decodeMetadataAccount(
            (await c.getAccountInfo(metadataPda(new PublicKey(mint)), "confirmed"))!.data,
          );

        // A new hosted document: its name and symbol go on chain with its uri.
        const uri = await hostDocument(h, apiKey, "Life Token v2", "LIFE2");
        const u1 = await update(h, apiKey, mint, {
          authority: wallet.publicKey.toBase58(),
          metadataUri: uri,
        });
        assertEquals(u1.status, 201, JSON.stringify(u1.body));
        assertEquals([u1.body.after.name, u1.body.after.symbol, u1.body.after.uri], [
          "Life Token v2",
          "LIFE2",
          uri,
        ]);
        assertEquals(u1.body.before.name, "Life Token");
        assertEquals(u1.body.costs.serviceFeeLamports, "0");
        assertEquals(u1.body.fee.reference, null);
        const l1 = await land(h, apiKey, mint, u1.body, wallet);
        // Exact to the lamport: the balance drop is the costs' total.
        assertEquals(l1.spent.toString(), u1.body.costs.totalLamports);
        assertEquals(l1.record.status, "landed");
        const m1 = await meta();
        assertEquals([m1.name, m1.symbol, m1.uri, m1.isMutable], [
          "Life Token v2",
          "LIFE2",
          uri,
          true,
        ]);
        let rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
        assertEquals([rec.current.name, rec.current.uri, rec.current.updates], [
          "Life Token v2",
          uri,
          1,
        ]);
        // The build's own record stays what was built.
        assertEquals(rec.name, "Life Token");

        // A name that is not the hosted document's is named.
        const wrong = await update(h, apiKey, mint, {
          authority: wallet.publicKey.toBase58(),
          metadataUri: await hostDocument(h, apiKey, "Third", "THIRD"),
          name: "Other",
        });
        assertEquals([wrong.status, Object.keys(wrong.body.error.fields)], [400, ["name"]]);

        // The update authority handed over: the old one is no longer the authority.
        const team = h.fundedWallet(1);
        const u2 = await update(h, apiKey, mint, {
          authority: wallet.publicKey.toBase58(),
          updateAuthority: team.publicKey.toBase58(),
        });
        assertEquals(u2.status, 201, JSON.stringify(u2.body));
        assertEquals(
          (await land(h, apiKey, mint, u2.body, wallet)).spent.toString(),
          u2.body.costs.totalLamports,
        );
        assertEquals((await meta()).updateAuthority, team.publicKey.toBase58());
        const notHim = await update(h, apiKey, mint, {
          authority: wallet.publicKey.toBase58(),
          metadataUri: "https://example.com/m/other.json",
        });
        assertEquals([notHim.status, Object.keys(notHim.body.error.fields)], [400, ["authority"]]);
        assertMatch(notHim.body.error.fields.authority, new RegExp(team.publicKey.toBase58()));

        // The new authority makes the metadata immutable; after that nothing of it changes.
        const u3 = await update(h, apiKey, mint, {
          authority: team.publicKey.toBase58(),
          isMutable: false,
        });
        assertEquals(u3.status, 201, JSON.stringify(u3.body));
        await land(h, apiKey, mint, u3.body, team);
        assertEquals((await meta()).isMutable, false);
        const frozen = await update(h, apiKey, mint, {
          authority: team.publicKey.toBase58(),
          metadataUri: "https://example.com/m/other.json",
        });
        assertEquals([frozen.status, Object.keys(frozen.body.error.fields)], [400, [
          "metadataUri",
        ]]);
        assertMatch(frozen.body.error.fields.metadataUri, /immutable/);

        // The mint authority revoked; a second revoke or a hand-over is refused, naming why.
        const u4 = await update(h, apiKey, mint, {
          authority: wallet.publicKey.toBase58(),
          mintAuthority: null,
        });
        assertEquals(u4.status, 201, JSON.stringify(u4.body));
        await land(h, apiKey, mint, u4.body, wallet);
        assertEquals((await getMint(c, new PublicKey(mint), "confirmed")).mintAuthority, null);
        const again = await update(h, apiKey, mint, {
          authority: wallet.publicKey.toBase58(),
          mintAuthority: team.publicKey.toBase58(),
        });
        assertEquals([again.status, Object.keys(again.body.error.fields)], [400, [
          "mintAuthority",
        ]]);
        assertMatch(again.body.error.fields.mintAuthority, /revoked/);

        rec = await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
        assertEquals(rec.current, {
          name: "Life Token v2",
          symbol: "LIFE2",
          uri,
          // A Metaplex account keeps its update authority when immutable (it can change nothing).
          updateAuthority: team.publicKey.toBase58(),
          isMutable: false,
          mintAuthority: null,
          freezeAuthority: wallet.publicKey.toBase58(),
          updates: 4,
          lastUpdateId: u4.body.updateId,
          updatedAt: rec.current.updatedAt,
        });
      } finally {
        await h.close();
      }
    },
  });
}

Deno.test("update: Token-2022 longer uri lands only with its rent top-up; costs exact to the lamport", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet, { tokenProgram: "token-2022" });
    const longUri = `https://example.com/m/${"x".repeat(150)}.json`;
    const u = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      metadataUri: longUri,
    });
    assertEquals(u.status, 201, JSON.stringify(u.body));
    // The name and symbol stay the token's (an external document is not read).
    assertEquals([u.body.after.name, u.body.after.symbol], ["Life Token", "LIFE"]);
    const topUp = BigInt(u.body.costs.rentTopUpLamports);
    assert(topUp > 0n, "a longer uri needs more rent");
    const mintBefore = BigInt(await c.getBalance(new PublicKey(mint), "confirmed"));

    // The same transaction without the top-up fails the runtime's rent check.
    const tx = decodeTx(u.body.transaction);
    const ixs = TransactionMessage.decompile(tx.message).instructions;
    const without = new TransactionMessage({
      payerKey: wallet.publicKey,
      recentBlockhash: tx.message.recentBlockhash,
      instructions: ixs.filter((_, i) => i !== 2),
    }).compileToLegacyMessage();
    const sim = await c.simulateTransaction(new VersionedTransaction(without), {
      sigVerify: false,
    });
    assert(sim.value.err !== null, "without the top-up the update must fail");
    assertMatch(JSON.stringify(sim.value.err), /InsufficientFundsForRent/);

    const l = await land(h, apiKey, mint, u.body, wallet);
    assertEquals(l.spent.toString(), u.body.costs.totalLamports);
    const mintAfter = BigInt(await c.getBalance(new PublicKey(mint), "confirmed"));
    assertEquals(mintAfter - mintBefore, topUp);
    const md = await getTokenMetadata(c, new PublicKey(mint), "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals(md?.uri, longUri);
    // Exactly rent-exempt at the new size.
    const info = await c.getAccountInfo(new PublicKey(mint), "confirmed");
    assertEquals(
      BigInt(await c.getMinimumBalanceForRentExemption(info!.data.length)),
      mintAfter,
    );

    // Authorities on Token-2022: the update authority handed over, the mint authority revoked.
    const team = h.fundedWallet(1);
    const u2 = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      updateAuthority: team.publicKey.toBase58(),
      mintAuthority: null,
    });
    assertEquals(u2.status, 201, JSON.stringify(u2.body));
    assertEquals(u2.body.costs.rentTopUpLamports, "0");
    const l2 = await land(h, apiKey, mint, u2.body, wallet);
    assertEquals(l2.spent.toString(), u2.body.costs.totalLamports);
    const md2 = await getTokenMetadata(c, new PublicKey(mint), "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals(md2?.updateAuthority?.toBase58(), team.publicKey.toBase58());
    const m = await getMint(c, new PublicKey(mint), "confirmed", TOKEN_2022_PROGRAM_ID);
    assertEquals(m.mintAuthority, null);

    // Immutable on Token-2022: nobody holds the update authority; a new uri is then refused.
    const u3 = await update(h, apiKey, mint, {
      authority: team.publicKey.toBase58(),
      isMutable: false,
    });
    assertEquals(u3.status, 201, JSON.stringify(u3.body));
    await land(h, apiKey, mint, u3.body, team);
    const frozen = await update(h, apiKey, mint, {
      authority: team.publicKey.toBase58(),
      metadataUri: "https://example.com/m/z.json",
    });
    assertEquals([frozen.status, Object.keys(frozen.body.error.fields)], [400, ["metadataUri"]]);
  } finally {
    await h.close();
  }
});

Deno.test("update: UPDATE_FEE_USD > 0 charges a fee to the treasury with a reference key", async () => {
  const h = await startHarness({ env: { UPDATE_FEE_USD: "0.5" } });
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    const u = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      freezeAuthority: null,
    });
    assertEquals(u.status, 201, JSON.stringify(u.body));
    // 0.5 USD at the harness's 150 USD/SOL, rounded up.
    assertEquals(u.body.fee.lamports, "3333334");
    assertEquals(u.body.costs.serviceFeeLamports, "3333334");
    assert(u.body.fee.reference, "a fee transfer carries a reference");
    const tx = decodeTx(u.body.transaction);
    assert(tx.message.staticAccountKeys.some((k) => k.toBase58() === u.body.fee.reference));
    const treasuryBefore = await c.getBalance(h.treasury.publicKey, "confirmed");
    const l = await land(h, apiKey, mint, u.body, wallet);
    assertEquals(l.spent.toString(), u.body.costs.totalLamports);
    assertEquals(await c.getBalance(h.treasury.publicKey, "confirmed") - treasuryBefore, 3333334);
    assertEquals([l.record.status, l.record.feeLamportsSeen], ["landed", "3333334"]);
    const pricing = await (await h.request("/v1/pricing")).json();
    assertEquals(pricing.update, { usd: 0.5, lamports: "3333334" });
  } finally {
    await h.close();
  }
});

Deno.test("update: bad bodies are named, another key's mint is 404, a typo'd authority refused", async () => {
  const h = await startHarness();
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    const me = wallet.publicKey.toBase58();
    const nothing = await update(h, apiKey, mint, { authority: me });
    assertEquals([nothing.status, Object.keys(nothing.body.error.fields)], [400, ["body"]]);
    const nameAlone = await update(h, apiKey, mint, {
      authority: me,
      name: "X",
      mintAuthority: null,
    });
    assertEquals(Object.keys(nameAlone.body.error.fields), ["name"]);
    const both = await update(h, apiKey, mint, {
      authority: me,
      isMutable: false,
      updateAuthority: Keypair.generate().publicKey.toBase58(),
    });
    assertEquals(Object.keys(both.body.error.fields).sort(), ["isMutable", "updateAuthority"]);
    const mutableTrue = await update(h, apiKey, mint, { authority: me, isMutable: true });
    assertEquals(Object.keys(mutableTrue.body.error.fields), ["isMutable"]);

    // An off-curve address with nothing at it: a typo would give the authority away.
    const [pda] = PublicKey.findProgramAddressSync(
      [new TextEncoder().encode("x")],
      h.treasury.publicKey,
    );
    const typo = await update(h, apiKey, mint, { authority: me, freezeAuthority: pda.toBase58() });
    assertEquals([typo.status, Object.keys(typo.body.error.fields)], [400, ["freezeAuthority"]]);
    assertMatch(typo.body.error.fields.freezeAuthority, /off-curve/);

    // An Idempotency-Key answers the same update again, with nothing built twice.
    const send = () =>
      h.request(`/v1/tokens/${mint}/update`, {
        method: "POST",
        headers: { ...bearer(apiKey), "idempotency-key": "update-1" },
        json: { authority: me, mintAuthority: null },
      });
    const first = await (await send()).json();
    const again = await send();
    assertEquals(again.headers.get("idempotent-replayed"), "true");
    assertEquals((await again.json()).updateId, first.updateId);

    const other = await h.newApiKey();
    const foreign = await update(h, other.apiKey, mint, { authority: me, mintAuthority: null });
    assertEquals(foreign.status, 404);
    const unknown = await h.request(`/v1/tokens/${mint}/updates/${"0".repeat(32)}`, {
      headers: bearer(apiKey),
    });
    assertEquals(unknown.status, 404);
    await unknown.body?.cancel();
  } finally {
    await h.close();
  }
});

Deno.test("update: a landed update is delivered as token.updated; replay rebuilds every projection", async () => {
  const receiver = startReceiver();
  const h = await startHarness({
    config: { webhooks: { allowLoopback: true } } as Partial<Config>,
    watch: true,
  });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const reg = await h.request("/v1/webhooks", {
      method: "POST",
      headers: bearer(apiKey),
      json: { url: receiver.url, events: ["token.updated"] },
    });
    const ep = await reg.json();
    assertEquals(reg.status, 201, JSON.stringify(ep));
    receiver.setSecret(ep.secret);
    const mint = await createToken(h, apiKey, wallet);
    const u = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      mintAuthority: null,
    });
    assertEquals(u.status, 201, JSON.stringify(u.body));
    await land(h, apiKey, mint, u.body, wallet);
    await receiver.waitFor(1);
    const [got] = receiver.verified;
    assertEquals(got.payload.type, "token.updated");
    assertEquals(got.payload.data.updateId, u.body.updateId);
    assertEquals((got.payload.data.after as { mintAuthority: unknown }).mintAuthority, null);
    assertEquals(got.headers["webhook-id"], `msg_upd_${u.body.updateId}_updated`);

    // The attempt is recorded after the receiver answered: replay once it is.
    for (let i = 0; i < 200; i++) {
      const list = await (await h.request(`/v1/webhooks/${ep.id}/deliveries`, {
        headers: bearer(apiKey),
      })).json();
      if (list.items[0]?.status === "delivered") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const report = await replayAndCompare(h.kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
  } finally {
    await h.close();
    await receiver.close();
  }
});
