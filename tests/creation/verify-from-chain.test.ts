/**
 * GET /v1/transactions/{signature} reports supply, decimals and recipient as the landed
 * transaction shows them, on the embedded chain: a transaction that mints another amount or with
 * other decimals than the build intended (anyone can sign a variant of their own build and send it
 * through their own RPC) is unverified and shows what really landed.
 */
import { Transaction } from "@solana/web3.js";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assertEquals } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";

const URI = "https://example.com/m/0123abcd.json";

async function buildFor(h: Harness, apiKey: string, payer: string, recipient: string) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
    json: {
      payer,
      recipient,
      name: "True Cat",
      symbol: "TRUE",
      metadataUri: URI,
      supply: "5",
      decimals: 6,
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return body;
}

/** The built transaction with one Token-program instruction's data rewritten, signed by us. */
function variant(b64: string, tag: number, patch: (data: Uint8Array) => void): Transaction {
  const tx = Transaction.from(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  const ix = tx.instructions.find((i) =>
    i.programId.equals(TOKEN_PROGRAM_ID) && i.data[0] === tag
  )!;
  patch(ix.data);
  tx.signatures = [];
  return tx;
}

Deno.test("verification reads supply, decimals and recipient from the landed transaction", async () => {
  // One payer lands several altered builds here: the refusal that follows is tested elsewhere.
  const h = await startHarness({ env: { REFUSE_PAYER_AFTER_UNVERIFIED: "100" } });
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const recipient = h.fundedWallet(0.01).publicKey.toBase58();
    const verify = async (sig: string) =>
      await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) })).json();
    const send = async (tx: Transaction) => {
      tx.sign(wallet);
      const sig = await c.sendRawTransaction(tx.serialize());
      await h.waitForConfirmation(sig);
      return sig;
    };

    // As built: confirmed, and every figure is the chain's (equal to the build's).
    const asBuilt = await buildFor(h, apiKey, wallet.publicKey.toBase58(), recipient);
    const ok = await verify(await send(variant(asBuilt.transaction, 7, () => {})));
    assertEquals(
      [ok.status, ok.supplyRaw, ok.decimals, ok.recipient, ok.mint],
      ["confirmed", "5000000", 6, recipient, asBuilt.mint],
    );

    // MintTo (7) of another amount: unverified, and the landed amount is what is reported.
    const more = await buildFor(h, apiKey, wallet.publicKey.toBase58(), recipient);
    const moreSig = await send(
      variant(
        more.transaction,
        7,
        (d) => new DataView(d.buffer, d.byteOffset).setBigUint64(1, 7_000_000n, true),
      ),
    );
    const seenMore = await verify(moreSig);
    assertEquals([seenMore.status, seenMore.supplyRaw, seenMore.decimals], [
      "unverified",
      "7000000",
      6,
    ]);

    // InitializeMint2 (20) with other decimals: unverified, the mint's real decimals reported.
    const dec = await buildFor(h, apiKey, wallet.publicKey.toBase58(), recipient);
    const decSig = await send(variant(dec.transaction, 20, (d) => d[1] = 2));
    const seenDec = await verify(decSig);
    assertEquals([seenDec.status, seenDec.supplyRaw, seenDec.decimals, seenDec.recipient], [
      "unverified",
      "5000000",
      2,
      recipient,
    ]);
    // The build record says so too, and the answer is served again without reading the chain.
    const again = await verify(decSig);
    assertEquals(again, seenDec);
  } finally {
    await h.close();
  }
});

Deno.test("confirmedAt (block time) is never before createdAt (service clock)", async () => {
  // The chain's blocks and the service follow the same clock, moved by hand.
  let offset = 0;
  const clock = () => Date.now() + offset;
  const h = await startHarness({ clock, chain: { slotMs: "manual", now: clock } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    h.chain.advanceSlots(1); // a slot begins...
    offset += 3_000; // ...and the build comes 3 s into it
    const built = await buildFor(
      h,
      apiKey,
      wallet.publicKey.toBase58(),
      wallet.publicKey.toBase58(),
    );
    offset += 4_000; // signed and sent 4 s later, in the same slot
    const tx = Transaction.from(Uint8Array.from(atob(built.transaction), (c) => c.charCodeAt(0)));
    tx.sign(wallet);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    const sentAt = Math.floor(clock() / 1000);
    await h.waitForConfirmation(sig);
    await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) })).json();
    const record = await (await h.request(`/v1/tokens/${built.mint}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals(record.status, "confirmed");
    assertEquals(record.confirmedAt >= record.createdAt, true, JSON.stringify(record));
    assertEquals(record.confirmedAt >= sentAt, true, JSON.stringify(record));
  } finally {
    await h.close();
  }
});
