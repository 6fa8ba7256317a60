/**
 * A Token-2022 creation goes through everything a classic one does: relay, the watcher,
 * verification (feeVerified, landed supply/decimals/recipient read from the transaction's token
 * balances, whichever program owns the mint), GET /v1/tokens/{mint}, and the audit with its
 * on-chain reconciliation; on the embedded chain, next to a classic build in the same history.
 */
import { Keypair, type Message, PublicKey } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID } from "@solana/spl-token";
import bs58 from "bs58";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { rpcTxReader } from "../../src/audit/chain-check.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import * as S from "../../src/openapi/schemas.ts";
import { BuildRecord } from "../../src/tokens/build-record.ts";

const URI = "https://example.com/m/t22.json";
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

async function build(h: Harness, apiKey: string, json: Record<string, unknown>) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
    json: { name: "Life Cycle", symbol: "LIFE", metadataUri: URI, ...json },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return body;
}

const record = async (h: Harness, apiKey: string, mint: string) =>
  await (await h.request(`/v1/tokens/${mint}`, { headers: bearer(apiKey) })).json();
const verify = async (h: Harness, apiKey: string, sig: string) =>
  await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) })).json();

Deno.test("token-2022 creations: relay, watcher, verification, GET, audit and reconciliation", async () => {
  // One payer lands several altered builds here: the refusal that follows is tested elsewhere.
  const h = await startHarness({ env: { REFUSE_PAYER_AFTER_UNVERIFIED: "100" } });
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const payer = wallet.publicKey.toBase58();
    const recipient = Keypair.generate().publicKey.toBase58();

    // 1. Relayed, another recipient, a transfer fee: the relay submits, verification confirms.
    const relayed = await build(h, apiKey, {
      payer,
      recipient,
      supplyRaw: "123456789",
      decimals: 3,
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 100, maximum: "1000" },
    });
    assertEquals(relayed.tokenProgram, "token-2022");
    const tx1 = decodeTx(relayed.transaction);
    tx1.sign([wallet]);
    const sent = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: { transaction: b64(tx1.serialize()) },
    });
    const accepted = await sent.json();
    assertEquals([sent.status, accepted.mint], [202, relayed.mint], JSON.stringify(accepted));
    await h.waitForConfirmation(accepted.signature);
    const v1 = await verify(h, apiKey, accepted.signature);
    S.Verification.parse(v1);
    assertEquals(
      [v1.status, v1.feeVerified, v1.mint, v1.supplyRaw, v1.decimals, v1.recipient],
      ["confirmed", true, relayed.mint, "123456789", 3, recipient],
    );
    const r1 = await record(h, apiKey, relayed.mint);
    BuildRecord.strict().parse(r1);
    assertEquals([r1.status, r1.feeVerified, r1.tokenProgram], ["confirmed", true, "token-2022"]);
    assertEquals(r1.transferFee, { basisPoints: 100, maximum: "1000", authority: payer });

    // 2. Sent through the caller's own RPC, permanent fee: the watcher finds and confirms it.
    const direct = await build(h, apiKey, {
      payer,
      supply: "5",
      decimals: 9,
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 0, maximum: "0", permanent: true },
      immutableMetadata: true,
    });
    const tx2 = decodeTx(direct.transaction);
    tx2.sign([wallet]);
    const sig2 = await c.sendRawTransaction(tx2.serialize());
    await h.waitForConfirmation(sig2);
    await sweepOpenBuilds(h.services);
    const r2 = await record(h, apiKey, direct.mint);
    assertEquals([r2.status, r2.signature, r2.feeVerified], ["confirmed", sig2, true]);
    assertEquals(r2.transferFee.authority, null);

    // 3. A payer who cuts the Token-2022 MintTo but pays the fee: unverified, supply named.
    const cut = await build(h, apiKey, {
      payer,
      supplyRaw: "1000",
      decimals: 0,
      tokenProgram: "token-2022",
    });
    const tx3 = decodeTx(cut.transaction);
    const message = tx3.message as Message;
    const mintTo = message.instructions.find((ix) =>
      message.accountKeys[ix.programIdIndex].equals(TOKEN_2022_PROGRAM_ID) &&
      bs58.decode(ix.data)[0] === 7
    )!;
    const data = bs58.decode(mintTo.data);
    new DataView(data.buffer, data.byteOffset).setBigUint64(1, 999n, true);
    mintTo.data = bs58.encode(data);
    tx3.sign([wallet]);
    const sig3 = await c.sendRawTransaction(tx3.serialize());
    await h.waitForConfirmation(sig3);
    const v3 = await verify(h, apiKey, sig3);
    assertEquals([v3.status, v3.feeVerified, v3.supplyRaw], ["unverified", true, "999"]);

    // 4. A classic build in the same history still reads as it always did (no tokenProgram).
    const classic = await build(h, apiKey, { payer, supply: "7" });
    assertEquals("tokenProgram" in classic, false);
    const tx4 = decodeTx(classic.transaction);
    tx4.sign([wallet]);
    const sig4 = await c.sendRawTransaction(tx4.serialize());
    await h.waitForConfirmation(sig4);
    assertEquals((await verify(h, apiKey, sig4)).status, "confirmed");
    const r4 = await record(h, apiKey, classic.mint);
    assertEquals(["tokenProgram" in r4, "transferFee" in r4], [false, false]);
    // The mint owner tells the programs apart on chain.
    assert(
      (await c.getAccountInfo(new PublicKey(relayed.mint)))!.owner.equals(TOKEN_2022_PROGRAM_ID),
    );

    // The audit with its on-chain reconciliation: every landed creation re-read, fees agree, the
    // one unverified creation is the only exception, and a replay rebuilds the projections.
    const scratch = await Deno.openKv(":memory:");
    try {
      const sink = new MemorySink();
      const summary = await runAudit({
        kv: h.kv,
        scratch,
        sink,
        readTx: rpcTxReader(c),
      });
      assertEquals(summary.verifiedOnChain, 4);
      assertEquals(summary.projections.mismatches, 0);
      const builds = Object.fromEntries(
        sink.rows("builds").map((r) => [r.mint as string, r]),
      );
      for (const b of [relayed, direct, classic]) {
        assertEquals(builds[b.mint].status, "confirmed");
        assertEquals(builds[b.mint].chainFeeLamports, b.fee.lamports);
      }
      assertEquals(builds[cut.mint].status, "unverified");
      assertEquals(
        sink.rows("exceptions").map((e) => [e.kind, e.mint, e.detail]),
        [[
          "creation_unverified",
          cut.mint,
          `fee-paid creation paid by ${payer}: recipient received 999 base units, expected 1000`,
        ]],
      );
    } finally {
      scratch.close();
    }
  } finally {
    await h.close();
  }
});
