/**
 * Token-2022 builds on the embedded chain (litesvm's bundled Token-2022 program): every option
 * combination lands, and what landed reads back through @solana/spl-token's own Token-2022
 * helpers (getMint, getTokenMetadata, getTransferFeeConfig, getAccount); the payer's balance
 * drops by exactly costs.totalLamports; the mint's lamports are exactly the rent of its final
 * size (after the metadata realloc).
 */
import { Keypair, PublicKey, SYSVAR_RENT_PUBKEY } from "@solana/web3.js";
import {
  ExtensionType,
  getAccount,
  getExtensionTypes,
  getMetadataPointerState,
  getMint,
  getMintLen,
  getTokenMetadata,
  getTransferFeeConfig,
  TOKEN_2022_PROGRAM_ID,
} from "@solana/spl-token";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { MAX_NAME_BYTES, MAX_SYMBOL_BYTES, MAX_URI_BYTES } from "../../src/domain/onchain-text.ts";

const URI = "https://example.com/m/0123abcd.json";
/** spl-token reads an unset OptionalNonZeroPubkey back as the all-zero key or null. */
const keyOrNull = (k: PublicKey | null | undefined) =>
  !k || k.equals(PublicKey.default) ? null : k.toBase58();

interface Options {
  immutableMetadata: boolean;
  revokeMint: boolean;
  revokeFreeze: boolean;
  transferFee: "none" | "payer" | "permanent";
}

async function buildAndLand(
  h: Harness,
  apiKey: string,
  wallet: Keypair,
  o: Options,
  extra: Record<string, unknown> = {},
) {
  const json: Record<string, unknown> = {
    payer: wallet.publicKey.toBase58(),
    name: "Twenty Two",
    symbol: "T22",
    metadataUri: URI,
    supply: "1000000",
    decimals: 6,
    tokenProgram: "token-2022",
    immutableMetadata: o.immutableMetadata,
    revokeMint: o.revokeMint,
    revokeFreeze: o.revokeFreeze,
    ...extra,
  };
  if (o.transferFee !== "none") {
    json.transferFee = {
      basisPoints: 250,
      maximum: "5000000",
      ...(o.transferFee === "permanent" ? { permanent: true } : {}),
    };
  }
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
    json,
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  const c = h.services.connection;
  const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
  const tx = decodeTx(body.transaction);
  tx.sign([wallet]);
  const signature = await c.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(signature);
  const after = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
  return { body, signature, spent: before - after };
}

Deno.test("token-2022: every option combination lands and reads back with spl-token's helpers", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    h.chain.airdrop(wallet.publicKey.toBase58(), 100_000_000_000n);
    const combos: Options[] = [];
    for (const immutableMetadata of [false, true]) {
      for (const revokeMint of [false, true]) {
        for (const revokeFreeze of [false, true]) {
          for (const transferFee of ["none", "payer", "permanent"] as const) {
            combos.push({ immutableMetadata, revokeMint, revokeFreeze, transferFee });
          }
        }
      }
    }
    for (const o of combos) {
      const label = JSON.stringify(o);
      const { body, spent } = await buildAndLand(h, apiKey, wallet, o);
      assertEquals(body.tokenProgram, "token-2022", label);
      // The balance drops by exactly what costs said.
      assertEquals(spent, BigInt(body.costs.totalLamports), label);
      assertEquals(body.costs.metadataRentLamports, "0", label);
      assertEquals(body.costs.metadataProtocolFeeLamports, "0", label);
      const mintKey = new PublicKey(body.mint);
      // The metadata lives in the mint.
      assertEquals(body.metadataAccount, body.mint, label);
      const info = await c.getAccountInfo(mintKey, "confirmed");
      assert(info!.owner.equals(TOKEN_2022_PROGRAM_ID), label);
      // Funded for exactly its final size, the metadata's realloc included.
      assertEquals(BigInt(info!.lamports), BigInt(body.costs.mintRentLamports), label);
      assertEquals(
        BigInt(info!.lamports),
        BigInt(await c.getMinimumBalanceForRentExemption(info!.data.length)),
        label,
      );
      const mint = await getMint(c, mintKey, "confirmed", TOKEN_2022_PROGRAM_ID);
      assertEquals(mint.decimals, 6, label);
      assertEquals(mint.supply, 1_000_000n * 10n ** 6n, label);
      assertEquals(
        mint.mintAuthority?.toBase58() ?? null,
        o.revokeMint ? null : body.requiredSigner,
      );
      assertEquals(
        mint.freezeAuthority?.toBase58() ?? null,
        o.revokeFreeze ? null : body.requiredSigner,
        label,
      );
      const expected = [ExtensionType.MetadataPointer, ExtensionType.TokenMetadata];
      if (o.transferFee !== "none") expected.push(ExtensionType.TransferFeeConfig);
      assertEquals(getExtensionTypes(mint.tlvData).sort(), expected.sort(), label);
      const pointer = getMetadataPointerState(mint)!;
      assertEquals(pointer.metadataAddress?.toBase58(), body.mint, label);
      assertEquals(
        keyOrNull(pointer.authority),
        o.immutableMetadata ? null : body.requiredSigner,
        label,
      );
      const meta = (await getTokenMetadata(c, mintKey, "confirmed", TOKEN_2022_PROGRAM_ID))!;
      assertEquals([meta.name, meta.symbol, meta.uri], ["Twenty Two", "T22", URI], label);
      assertEquals(meta.mint.toBase58(), body.mint, label);
      assertEquals(
        keyOrNull(meta.updateAuthority),
        o.immutableMetadata ? null : body.requiredSigner,
        label,
      );
      const fee = getTransferFeeConfig(mint);
      if (o.transferFee === "none") assertEquals(fee, null, label);
      else {
        const authority = o.transferFee === "permanent" ? null : body.requiredSigner;
        assertEquals(keyOrNull(fee!.transferFeeConfigAuthority), authority, label);
        assertEquals(keyOrNull(fee!.withdrawWithheldAuthority), authority, label);
        assertEquals(fee!.newerTransferFee.transferFeeBasisPoints, 250, label);
        assertEquals(fee!.newerTransferFee.maximumFee, 5_000_000n, label);
      }
      const account = await getAccount(
        c,
        new PublicKey(body.recipientTokenAccount),
        "confirmed",
        TOKEN_2022_PROGRAM_ID,
      );
      assertEquals(account.amount, 1_000_000n * 10n ** 6n, label);
      assertEquals(account.owner.toBase58(), body.requiredSigner, label);
      assertEquals(account.mint.toBase58(), body.mint, label);
      const accountInfo = await c.getAccountInfo(account.address, "confirmed");
      assertEquals(
        BigInt(accountInfo!.lamports),
        BigInt(body.costs.tokenAccountRentLamports),
        label,
      );
      assert(getMintLen([]) < info!.data.length, label);
    }
  } finally {
    await h.close();
  }
});

Deno.test("token-2022 with every option on and the longest name, symbol and uri: within 1232 bytes, lands", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const recipient = Keypair.generate().publicKey.toBase58();
    const name = "€".repeat(10) + "Zq"; // 32 bytes of UTF-8
    const symbol = "SYMBOLXYZW"; // 10 bytes
    const uri = "https://example.com/" + "u".repeat(180); // 200 bytes
    assertEquals(
      [name, symbol, uri].map((s) => new TextEncoder().encode(s).length),
      [MAX_NAME_BYTES, MAX_SYMBOL_BYTES, MAX_URI_BYTES],
    );
    const res = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: {
        payer: wallet.publicKey.toBase58(),
        recipient,
        name,
        symbol,
        metadataUri: uri,
        supplyRaw: "18446744073709551615",
        decimals: 9,
        tokenProgram: "token-2022",
        transferFee: { basisPoints: 10_000, maximum: "18446744073709551615" },
        immutableMetadata: true,
        revokeMint: true,
        revokeFreeze: false,
        vanity: { suffix: "z", ignoreCase: true },
      },
    });
    const body = await res.json();
    assertEquals(res.status, 201, JSON.stringify(body));
    const wire = Uint8Array.from(atob(body.transaction), (ch) => ch.charCodeAt(0));
    assert(wire.length <= 1232, `${wire.length} bytes`);
    assertEquals(body.mint.toLowerCase().endsWith("z"), true);
    const tx = decodeTx(body.transaction);
    // Signed, it is the same size: the signature fills the slot the unsigned form carries.
    tx.sign([wallet]);
    assertEquals(tx.serialize().length, wire.length);
    const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
    const sig = await c.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    assertEquals(
      before - BigInt(await c.getBalance(wallet.publicKey, "confirmed")),
      BigInt(body.costs.totalLamports),
    );
    const meta = (await getTokenMetadata(c, new PublicKey(body.mint), "confirmed"))!;
    assertEquals([meta.name, meta.symbol, meta.uri], [name, symbol, uri]);
    const account = await getAccount(
      c,
      new PublicKey(body.recipientTokenAccount),
      "confirmed",
      TOKEN_2022_PROGRAM_ID,
    );
    assertEquals([account.owner.toBase58(), account.amount], [recipient, (1n << 64n) - 1n]);
  } finally {
    await h.close();
  }
});

Deno.test("token-2022 costs: a payer holding exactly totalLamports builds and lands at 0; one lamport less is insufficient_funds", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey } = await h.newApiKey();
    const payer = Keypair.generate();
    const json = {
      payer: payer.publicKey.toBase58(),
      name: "Exact Two",
      symbol: "EX2",
      metadataUri: URI,
      supply: "10",
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 50, maximum: "10" },
    };
    const post = async () => {
      const res = await h.request("/v1/tokens", { method: "POST", headers: bearer(apiKey), json });
      return { status: res.status, body: await res.json() };
    };
    const none = await post();
    assertEquals(none.body.error.code, "insufficient_funds");
    const total = BigInt(none.body.error.fields.costs.totalLamports);
    // No Metaplex account: the network's share is the two accounts' rent and the fee.
    assertEquals(none.body.error.fields.costs.metadataProtocolFeeLamports, "0");
    h.chain.airdrop(payer.publicKey.toBase58(), total - 1n);
    const short = await post();
    assertEquals(short.body.error.code, "insufficient_funds");
    h.chain.airdrop(payer.publicKey.toBase58(), 1n);
    const ok = await post();
    assertEquals(ok.status, 201, JSON.stringify(ok.body));
    assertEquals(ok.body.costs.totalLamports, total.toString());
    const tx = decodeTx(ok.body.transaction);
    tx.sign([payer]);
    const sig = await c.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    assertEquals(await c.getBalance(payer.publicKey, "confirmed"), 0);
  } finally {
    await h.close();
  }
});

Deno.test("token-2022 costs stay exact through an RPC that serves no Rent sysvar (rent asked by size)", async () => {
  const asked: number[] = [];
  // The node answers getAccountInfo(Rent sysvar) with null, as some RPC providers do.
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
    const { apiKey, wallet } = await h.newApiKey();
    const o = {
      immutableMetadata: false,
      revokeMint: true,
      revokeFreeze: true,
      transferFee: "payer",
    } as const;
    const { body, spent } = await buildAndLand(h, apiKey, wallet, o);
    assertEquals(spent, BigInt(body.costs.totalLamports));
    // The mint's final size and the 182-byte token account were asked for by size.
    const info = await h.services.connection.getAccountInfo(new PublicKey(body.mint), "confirmed");
    assert(asked.includes(info!.data.length), `asked ${asked}`);
    assert(asked.includes(182), `asked ${asked}`);
  } finally {
    await h.close();
  }
});
