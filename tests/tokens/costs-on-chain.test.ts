/**
 * `costs` of POST /v1/tokens against what the chain does, on the emulated Token Metadata program
 * and on the real one (the mainnet program dump, where present): the payer's balance drops by
 * exactly `costs.totalLamports`; a payer holding exactly that builds and lands; one lamport less
 * is insufficient_funds naming the shortfall.
 */
import { Keypair } from "@solana/web3.js";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { METADATA_PROGRAM_MODES, needsMetaplexSo } from "../support/metaplex-fixture.ts";
import { MAX_METADATA_LEN } from "../../src/solana/token-metadata.ts";
import { TokenBuilt } from "../../src/tokens/build-response.ts";
import { buildToken } from "../../src/tokens/build-token.ts";
import { deriveAddresses, newSeed } from "../../src/tokens/transaction.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import { openApiDocument } from "../../src/openapi/document.ts";

const URI = "https://example.com/m/0123abcd.json";
const COST_PARTS = [
  "networkFeeLamports",
  "priorityFeeLamports",
  "mintRentLamports",
  "tokenAccountRentLamports",
  "metadataRentLamports",
  "metadataProtocolFeeLamports",
  "serviceFeeLamports",
] as const;

async function build(h: Harness, apiKey: string, payer: string) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
    json: { payer, name: "Cost Cat", symbol: "COST", metadataUri: URI, supply: "1000" },
  });
  return { status: res.status, body: await res.json() };
}

async function signAndSend(h: Harness, b64: string, payer: Keypair): Promise<string> {
  const tx = decodeTx(b64);
  tx.sign([payer]);
  const sig = await h.services.connection.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

for (const { mode, so } of METADATA_PROGRAM_MODES) {
  Deno.test({
    name: `costs (${mode} Token Metadata program): the balance drops by exactly totalLamports; ` +
      "exactly that builds and lands, one lamport less is insufficient_funds",
    ...(mode === "real" ? needsMetaplexSo() : {}),
    fn: async () => {
      const h = await startHarness({ chain: { tokenMetadataProgramSo: so } });
      try {
        const c = h.services.connection;
        const { apiKey, wallet, keyId } = await h.newApiKey();

        // A well-funded payer: every part is named, they add up, and the chain agrees.
        const rich = await build(h, apiKey, wallet.publicKey.toBase58());
        assertEquals(rich.status, 201, JSON.stringify(rich.body));
        const costs = rich.body.costs;
        // As documented: the schema parses the real 201 strictly, costs included.
        TokenBuilt.extend({ costs: TokenBuilt.shape.costs.strict() }).strict().parse(rich.body);
        for (const k of [...COST_PARTS, "totalLamports"]) assertMatch(costs[k], /^[0-9]+$/, k);
        assertEquals(
          COST_PARTS.reduce((sum, k) => sum + BigInt(costs[k]), 0n),
          BigInt(costs.totalLamports),
        );
        assertEquals(costs.serviceFeeLamports, rich.body.fee.lamports);
        assertEquals(costs.networkFeeLamports, "5000");
        // Rent from the chain itself, for the 607-byte account the program allocates.
        assertEquals(
          BigInt(costs.metadataRentLamports),
          BigInt(await c.getMinimumBalanceForRentExemption(MAX_METADATA_LEN)),
        );
        assertEquals(costs.metadataRentLamports, "5115600");
        assertEquals(costs.metadataProtocolFeeLamports, "10000000");
        // The pricing the portal shows: the same network costs, without fee and priority fee.
        const pricing = await (await h.request("/v1/pricing")).json();
        assertEquals(
          BigInt(pricing.token.networkLamports),
          BigInt(costs.totalLamports) - BigInt(costs.serviceFeeLamports) -
            BigInt(costs.priorityFeeLamports),
        );
        const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
        const sig = await signAndSend(h, rich.body.transaction, wallet);
        const after = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
        assertEquals(before - after, BigInt(costs.totalLamports));
        const landed = await c.getTransaction(sig, { commitment: "confirmed" });
        // The unit limit covers what the transaction used, with the margin (15% + 5,000).
        const limitIx = decodeTx(rich.body.transaction).message.compiledInstructions.find((ix) =>
          ix.data[0] === 2 && ix.data.length === 5
        )!;
        const limit = new DataView(limitIx.data.buffer, limitIx.data.byteOffset).getUint32(1, true);
        const used = landed!.meta!.computeUnitsConsumed!;
        assert(limit >= Math.ceil(used * 1.15) + 5_000, `limit ${limit}, used ${used}`);
        assertEquals(
          BigInt(landed!.meta!.fee),
          BigInt(costs.networkFeeLamports) +
            BigInt(costs.priorityFeeLamports),
        );
        const metadata = await c.getAccountInfo(
          new (await import("@solana/web3.js")).PublicKey(rich.body.metadataAccount),
          "confirmed",
        );
        assertEquals(metadata!.data.length, MAX_METADATA_LEN);
        assertEquals(
          BigInt(metadata!.lamports),
          BigInt(costs.metadataRentLamports) + BigInt(costs.metadataProtocolFeeLamports),
        );

        // Lamports someone already sent to the token account's address lower its rent: the
        // payer spends exactly the smaller total (the ATA program tops the address up only).
        const seed = newSeed();
        const addr = await deriveAddresses(wallet.publicKey, seed, wallet.publicKey);
        h.chain.airdrop(addr.recipientTokenAccount.toBase58(), 1_500_000n);
        const caller = (await h.kv.get<KeyDoc>(projectionKey("key", [keyId]))).value!;
        const prefunded = await buildToken(h.services, caller, {
          payer: wallet.publicKey,
          recipient: wallet.publicKey,
          name: "Cost Cat",
          symbol: "COST",
          metadataUri: URI,
          decimals: 9,
          supplyRaw: 10n ** 12n,
          revokeMint: false,
          revokeFreeze: true,
          immutableMetadata: false,
        }, { seed });
        assertEquals(
          BigInt(prefunded.costs.tokenAccountRentLamports),
          BigInt(await c.getMinimumBalanceForRentExemption(165)) - 1_500_000n,
        );
        const beforePrefunded = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
        await signAndSend(h, prefunded.transaction, wallet);
        assertEquals(
          beforePrefunded - BigInt(await c.getBalance(wallet.publicKey, "confirmed")),
          BigInt(prefunded.costs.totalLamports),
        );

        // A payer never funded learns the whole spend; funded with exactly it, it builds.
        const exact = Keypair.generate();
        const none = await build(h, apiKey, exact.publicKey.toBase58());
        assertEquals(none.body.error.code, "insufficient_funds");
        const total = BigInt(none.body.error.fields.costs.totalLamports);
        assertEquals(none.body.error.fields.spend, total.toString());
        h.chain.airdrop(exact.publicKey.toBase58(), total);
        const ok = await build(h, apiKey, exact.publicKey.toBase58());
        assertEquals(ok.status, 201, JSON.stringify(ok.body));
        assertEquals(ok.body.costs.totalLamports, total.toString());
        await signAndSend(h, ok.body.transaction, exact);
        assertEquals(await c.getBalance(exact.publicKey, "confirmed"), 0);

        // One lamport less: refused, naming the shortfall (it may not end between 0 and the
        // rent-exempt reserve, so what it needs is the spend plus that reserve).
        const short = Keypair.generate();
        h.chain.airdrop(short.publicKey.toBase58(), total - 1n);
        const refused = await build(h, apiKey, short.publicKey.toBase58());
        assertEquals([refused.status, refused.body.error.code], [400, "insufficient_funds"]);
        const f = refused.body.error.fields;
        assertEquals(f.available, (total - 1n).toString());
        assertEquals(f.costs.totalLamports, total.toString());
        const reserve = BigInt(await c.getMinimumBalanceForRentExemption(0));
        assertEquals(f.needed, (total + reserve).toString());
        assertEquals(f.shortfall, (reserve + 1n).toString());
        assertMatch(refused.body.error.message, new RegExp(`${reserve + 1n} lamports short`));
        assert(!("transaction" in refused.body));
      } finally {
        await h.close();
      }
    },
  });
}

Deno.test("the OpenAPI document describes costs in the 201 of POST /v1/tokens", () => {
  const doc = openApiDocument({ serverUrl: "https://api.example.test" }) as unknown as {
    components: {
      schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }>;
    };
  };
  const built = doc.components.schemas.TokenBuilt;
  assert(built.required!.includes("costs"));
  const costs = built.properties.costs as { required: string[] };
  assertEquals(costs.required.sort(), [...COST_PARTS, "totalLamports"].sort());
});

/** Relayed and sent directly, revoke on and off, decimals at both ends: what each mode shows. */
async function serviceFlows(so: string | undefined) {
  const h = await startHarness({ chain: { tokenMetadataProgramSo: so } });
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const seen = [];
    const flows = [
      { via: "relay", decimals: 0, revokeMint: true, supply: "1" },
      { via: "direct", decimals: 9, revokeMint: false, supplyRaw: "18446744073709551615" },
      { via: "relay", decimals: 9, revokeMint: false, supply: "1000000" },
    ];
    for (const f of flows) {
      const { via, ...req } = f;
      const res = await h.request("/v1/tokens", {
        method: "POST",
        headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
        json: {
          payer: wallet.publicKey.toBase58(),
          name: "Twin Cat",
          symbol: "TWIN",
          metadataUri: URI,
          ...req,
        },
      });
      const built = await res.json();
      assertEquals(res.status, 201, JSON.stringify(built));
      const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
      const tx = decodeTx(built.transaction);
      tx.sign([wallet]);
      let sig: string;
      if (via === "relay") {
        const relayed = await h.request("/v1/transactions", {
          method: "POST",
          headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
          json: { transaction: btoa(String.fromCharCode(...tx.serialize())) },
        });
        const body = await relayed.json();
        assertEquals(relayed.status, 202, JSON.stringify(body));
        sig = body.signature;
      } else {
        sig = await c.sendRawTransaction(tx.serialize());
      }
      await h.waitForConfirmation(sig);
      const after = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
      const verified = await (await h.request(`/v1/transactions/${sig}`, {
        headers: bearer(apiKey),
      })).json();
      const { serviceFeeLamports: _fee, ...chainCosts } = built.costs;
      seen.push({
        spent: (before - after).toString(),
        total: built.costs.totalLamports,
        chainCosts,
        status: verified.status,
        decimals: verified.decimals,
        supplyRaw: verified.supplyRaw,
      });
    }
    return seen;
  } finally {
    await h.close();
  }
}

Deno.test({
  name: "differential (service): relay and direct, revoke on/off, decimals 0 and 9 cost and " +
    "verify the same on the emulated and the real program",
  ...needsMetaplexSo(),
  fn: async () => {
    const emulated = await serviceFlows(undefined);
    const real = await serviceFlows(METADATA_PROGRAM_MODES[1].so);
    for (const s of real) {
      assertEquals(s.spent, s.total);
      assertEquals(s.status, "confirmed");
    }
    assertEquals(emulated, real);
    assertEquals(real.map((s) => [s.decimals, s.supplyRaw]), [
      [0, "1"],
      [9, "18446744073709551615"],
      [9, "1000000000000000"],
    ]);
  },
});
