/**
 * GET /v1/pricing's Token-2022 figure (`token.token2022NetworkLamports`) against real builds on the
 * embedded chain: the largest Token-2022 build (longest name, symbol and uri, with a transfer fee)
 * spends exactly that besides the service and priority fees, and a smaller one spends less; from
 * an RPC that serves no Rent sysvar the figure is the same, asked by size.
 */
import { Keypair, SYSVAR_RENT_PUBKEY } from "@solana/web3.js";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";

const LONGEST = {
  name: "€".repeat(10) + "Zq", // 32 bytes of UTF-8
  symbol: "SYMBOLXYZW", // 10 bytes
  metadataUri: "https://example.com/" + "u".repeat(180), // 200 bytes
};

async function pricing(h: Harness) {
  const res = await h.request("/v1/pricing");
  assertEquals(res.status, 200);
  return (await res.json()).token;
}

/** Builds, signs and lands; returns the network's share of the build's costs and the spend. */
async function land(h: Harness, apiKey: string, wallet: Keypair, json: Record<string, unknown>) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
    json: {
      payer: wallet.publicKey.toBase58(),
      supply: "1000",
      tokenProgram: "token-2022",
      ...json,
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  const c = h.services.connection;
  const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
  const tx = decodeTx(body.transaction);
  tx.sign([wallet]);
  await h.waitForConfirmation(await c.sendRawTransaction(tx.serialize()));
  const after = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
  const costs = body.costs;
  assertEquals(before - after, BigInt(costs.totalLamports));
  return BigInt(costs.totalLamports) - BigInt(costs.serviceFeeLamports) -
    BigInt(costs.priorityFeeLamports);
}

Deno.test("pricing: token2022NetworkLamports is what the largest Token-2022 build spends on the network, and less than the classic figure", async () => {
  const h = await startHarness();
  try {
    const token = await pricing(h);
    assertMatch(token.token2022NetworkLamports, /^[0-9]+$/);
    const { apiKey, wallet } = await h.newApiKey();
    const largest = await land(h, apiKey, wallet, {
      ...LONGEST,
      transferFee: { basisPoints: 100, maximum: "1000" },
    });
    assertEquals(largest, BigInt(token.token2022NetworkLamports));
    const small = await land(h, apiKey, wallet, {
      name: "Two",
      symbol: "T2",
      metadataUri: "https://example.com/t.json",
    });
    assert(small < largest, `${small} < ${largest}`);
    assert(largest < BigInt(token.networkLamports), `${largest} < ${token.networkLamports}`);
  } finally {
    await h.close();
  }
});

Deno.test("pricing from an RPC that serves no Rent sysvar: the same figures, the Token-2022 sizes asked once", async () => {
  const reference = await startHarness();
  let expected;
  try {
    expected = await pricing(reference);
  } finally {
    await reference.close();
  }
  const asked: number[] = [];
  const rpcFetch: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    if (
      body?.method === "getAccountInfo" && body.params?.[0] === SYSVAR_RENT_PUBKEY.toBase58()
    ) {
      return Response.json({
        jsonrpc: "2.0",
        id: body.id,
        result: { context: { slot: 1 }, value: null },
      });
    }
    if (body?.method === "getMinimumBalanceForRentExemption") asked.push(body.params[0]);
    return await fetch(input, init);
  };
  const h = await startHarness({ rpcFetch });
  try {
    const first = await pricing(h);
    assertEquals(first.networkLamports, expected.networkLamports);
    assertEquals(first.token2022NetworkLamports, expected.token2022NetworkLamports);
    const count = asked.length;
    assertEquals((await pricing(h)).token2022NetworkLamports, expected.token2022NetworkLamports);
    assertEquals(asked.length, count, "the figures are worked out once per connection");
  } finally {
    await h.close();
  }
});
