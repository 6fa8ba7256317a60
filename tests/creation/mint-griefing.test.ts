/**
 * A build's mint address is in the transaction the payer signs, so the relay, the leaders and
 * anyone watching see it before it lands. Lamports someone sends there first must not stop the
 * creation: it still lands, verifies as `confirmed` with the fee, and the payer spends exactly
 * `costs.totalLamports` (the lamports already there stay in the mint, lowering nothing), on the
 * emulated and on the real Token Metadata program, and for a Token-2022 mint. Nobody but the
 * payer can allocate or assign the address.
 */
import {
  Keypair,
  LAMPORTS_PER_SOL,
  type Message,
  PublicKey,
  SystemInstruction,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import { MINT_SIZE, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assert, assertEquals, assertMatch, assertRejects } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { METADATA_PROGRAM_MODES, needsMetaplexSo } from "../support/metaplex-fixture.ts";
import { buildToken } from "../../src/tokens/build-token.ts";
import { newSeed } from "../../src/tokens/transaction.ts";
import { projectionKey } from "../../events/keys.ts";
import type { KeyDoc } from "../../projections/keys.ts";

const URI = "https://example.com/m/grief.json";

async function build(
  h: Harness,
  apiKey: string,
  payer: Keypair,
  name: string,
  extra: Record<string, unknown> = {},
) {
  const res = await h.request("/v1/tokens", {
    method: "POST",
    headers: { ...bearer(apiKey), "idempotency-key": crypto.randomUUID() },
    json: {
      payer: payer.publicKey.toBase58(),
      name,
      symbol: "GRF",
      metadataUri: URI,
      supply: "7",
      ...extra,
    },
  });
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return body;
}

/** A transaction of the attacker's own, paid and signed by it alone. */
async function attackerSends(h: Harness, attacker: Keypair, ...ixs: TransactionInstruction[]) {
  const c = h.services.connection;
  const { blockhash } = await c.getLatestBlockhash("confirmed");
  const tx = new Transaction({ feePayer: attacker.publicKey, recentBlockhash: blockhash }).add(
    ...ixs,
  );
  tx.sign(attacker);
  const sig = await c.sendRawTransaction(tx.serialize());
  await h.waitForConfirmation(sig);
}

/** The payer signs what was built and sends it, through the relay or straight to the RPC. */
async function payerSubmits(
  h: Harness,
  apiKey: string,
  payer: Keypair,
  transaction: string,
  via: "relay" | "direct",
): Promise<string> {
  const tx = decodeTx(transaction);
  tx.sign([payer]);
  let sig: string;
  if (via === "relay") {
    const res = await h.request("/v1/transactions", {
      method: "POST",
      headers: bearer(apiKey),
      json: { transaction: btoa(String.fromCharCode(...tx.serialize())) },
    });
    const body = await res.json();
    assertEquals(res.status, 202, JSON.stringify(body));
    sig = body.signature;
  } else {
    sig = await h.services.connection.sendRawTransaction(tx.serialize());
  }
  await h.waitForConfirmation(sig);
  return sig;
}

for (const { mode, so } of METADATA_PROGRAM_MODES) {
  Deno.test({
    name: `lamports sent to the mint address before the payer's transaction do not stop it ` +
      `(${mode} Token Metadata program)`,
    ...(mode === "real" ? needsMetaplexSo() : {}),
    fn: async () => {
      const h = await startHarness({ chain: { tokenMetadataProgramSo: so } });
      try {
        const c = h.services.connection;
        const { apiKey, wallet, keyId } = await h.newApiKey();
        const attacker = h.fundedWallet(100);
        const mintRent = BigInt(await c.getMinimumBalanceForRentExemption(MINT_SIZE));
        const walletRent = BigInt(await c.getMinimumBalanceForRentExemption(0));
        const transfer = (to: string, lamports: bigint) =>
          attackerSends(
            h,
            attacker,
            SystemProgram.transfer({
              fromPubkey: attacker.publicKey,
              toPubkey: new PublicKey(to),
              lamports,
            }),
          );

        // On a fresh address the runtime refuses a transfer that leaves it between 0 and a
        // wallet's rent-exempt minimum, so 1 lamport alone cannot be sent: the cheapest grief is
        // that minimum (890,880 lamports), and then any amount on top of it, 1 lamport included.
        const probe = await build(h, apiKey, wallet, "Probe Cat");
        await assertRejects(() => transfer(probe.mint, 1n), Error, "insufficient funds for rent");

        const cases: {
          what: string;
          via: "relay" | "direct";
          grief: (mint: string) => Promise<unknown>;
          sent: bigint;
        }[] = [
          {
            what: "a wallet's rent-exempt minimum, then 1 lamport more",
            via: "relay",
            grief: async (mint) => {
              await transfer(mint, walletRent);
              await transfer(mint, 1n);
            },
            sent: walletRent + 1n,
          },
          {
            what: "50 SOL",
            via: "direct",
            grief: (mint) => transfer(mint, 50n * BigInt(LAMPORTS_PER_SOL)),
            sent: 50n * BigInt(LAMPORTS_PER_SOL),
          },
        ];
        for (const k of cases) {
          const label = `${k.what} (${k.via})`;
          const built = await build(h, apiKey, wallet, "Grief Cat");
          await k.grief(built.mint);
          assertEquals(
            BigInt(await c.getBalance(new PublicKey(built.mint), "confirmed")),
            k.sent,
            label,
          );
          const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
          const sig = await payerSubmits(h, apiKey, wallet, built.transaction, k.via);
          const after = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
          assertEquals(before - after, BigInt(built.costs.totalLamports), label);
          assertEquals(BigInt(built.costs.mintRentLamports), mintRent, label);

          const v = await (await h.request(`/v1/transactions/${sig}`, {
            headers: bearer(apiKey),
          })).json();
          assertEquals([v.status, v.feeVerified, v.mint], ["confirmed", true, built.mint], label);
          // The mint holds what was sent plus the rent the payer put in, and is a mint.
          const mint = (await c.getAccountInfo(new PublicKey(built.mint), "confirmed"))!;
          assertEquals(
            [mint.owner.toBase58(), mint.data.length, BigInt(mint.lamports)],
            [TOKEN_PROGRAM_ID.toBase58(), MINT_SIZE, k.sent + mintRent],
            label,
          );
        }

        // Lamports already there when the build simulates: it builds, charging the full rent.
        // (The build's test seam fixes the seed, so the address is known before the build.)
        const seed = newSeed();
        const address = await PublicKey.createWithSeed(wallet.publicKey, seed, TOKEN_PROGRAM_ID);
        await transfer(address.toBase58(), 3n * walletRent);
        const caller = (await h.kv.get<KeyDoc>(projectionKey("key", [keyId]))).value!;
        const early = await buildToken(h.services, caller, {
          payer: wallet.publicKey,
          recipient: wallet.publicKey,
          name: "Early Cat",
          symbol: "GRF",
          metadataUri: URI,
          decimals: 9,
          supplyRaw: 7n,
          revokeMint: false,
          revokeFreeze: true,
          immutableMetadata: false,
        }, { seed });
        assertEquals(early.mint, address.toBase58());
        assertEquals(BigInt(early.costs.mintRentLamports), mintRent);
        const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
        const sig = await payerSubmits(h, apiKey, wallet, early.transaction, "direct");
        assertEquals(
          before - BigInt(await c.getBalance(wallet.publicKey, "confirmed")),
          BigInt(early.costs.totalLamports),
        );
        const v = await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) }))
          .json();
        assertEquals([v.status, v.feeVerified], ["confirmed", true]);
      } finally {
        await h.close();
      }
    },
  });
}

Deno.test("Token-2022: lamports sent to the mint address before the payer's transaction do not stop it", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(100);
    const built = await build(h, apiKey, wallet, "Grief 2022", {
      tokenProgram: "token-2022",
      transferFee: { basisPoints: 50, maximum: "1000" },
    });
    const sent = 7n * BigInt(LAMPORTS_PER_SOL);
    await attackerSends(
      h,
      attacker,
      SystemProgram.transfer({
        fromPubkey: attacker.publicKey,
        toPubkey: new PublicKey(built.mint),
        lamports: sent,
      }),
    );
    const before = BigInt(await c.getBalance(wallet.publicKey, "confirmed"));
    const sig = await payerSubmits(h, apiKey, wallet, built.transaction, "relay");
    assertEquals(
      before - BigInt(await c.getBalance(wallet.publicKey, "confirmed")),
      BigInt(built.costs.totalLamports),
    );
    const v = await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals([v.status, v.feeVerified, v.mint], ["confirmed", true, built.mint]);
    const mint = (await c.getAccountInfo(new PublicKey(built.mint), "confirmed"))!;
    assertEquals(
      [mint.owner.toBase58(), BigInt(mint.lamports)],
      [TOKEN_2022_PROGRAM_ID.toBase58(), sent + BigInt(built.costs.mintRentLamports)],
    );
  } finally {
    await h.close();
  }
});

Deno.test("nobody but the payer can allocate or assign a build's mint address", async () => {
  const h = await startHarness();
  try {
    const c = h.services.connection;
    const { apiKey, wallet } = await h.newApiKey();
    const attacker = h.fundedWallet(10);
    const built = await build(h, apiKey, wallet, "Guarded Cat");
    const mint = new PublicKey(built.mint);
    // The seed is in the signed transaction for anyone to read.
    const { seed } = SystemInstruction.decodeAllocateWithSeed(
      Transaction.populate(decodeTx(built.transaction).message as Message).instructions.find((
        ix,
      ) =>
        ix.programId.equals(SystemProgram.programId) &&
        SystemInstruction.decodeInstructionType(ix) === "AllocateWithSeed"
      )!,
    );
    assertEquals(
      (await PublicKey.createWithSeed(wallet.publicKey, seed, TOKEN_PROGRAM_ID)).toBase58(),
      built.mint,
    );

    // The payer's key without its signature: the System program requires the base to sign.
    const unsigned = (ix: TransactionInstruction) => {
      for (const k of ix.keys) if (k.pubkey.equals(wallet.publicKey)) k.isSigner = false;
      return ix;
    };
    const attempts: [string, TransactionInstruction][] = [
      [
        "allocateWithSeed",
        unsigned(SystemProgram.allocate({
          accountPubkey: mint,
          basePubkey: wallet.publicKey,
          seed,
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        })),
      ],
      [
        "assignWithSeed",
        unsigned(SystemProgram.assign({
          accountPubkey: mint,
          basePubkey: wallet.publicKey,
          seed,
          programId: TOKEN_PROGRAM_ID,
        })),
      ],
      [
        "createAccountWithSeed",
        unsigned(SystemProgram.createAccountWithSeed({
          fromPubkey: attacker.publicKey,
          basePubkey: wallet.publicKey,
          seed,
          newAccountPubkey: mint,
          lamports: 2_000_000,
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        })),
      ],
      // Without a seed the address itself must sign, and nobody holds its key.
      [
        "allocate",
        (() => {
          const ix = SystemProgram.allocate({ accountPubkey: mint, space: MINT_SIZE });
          ix.keys[0].isSigner = false;
          return ix;
        })(),
      ],
    ];
    for (const [what, ix] of attempts) {
      const { blockhash } = await c.getLatestBlockhash("confirmed");
      const tx = new Transaction({ feePayer: attacker.publicKey, recentBlockhash: blockhash })
        .add(ix);
      tx.sign(attacker);
      // Sent without preflight, so the failure is the chain's: it lands failed, or not at all.
      const sig = await c.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      const failed = await h.waitForConfirmation(sig).then(() => null, (e: Error) => e.message);
      assert(failed !== null, `${what} succeeded`);
      assertMatch(failed, /MissingRequiredSignature/, what);
    }
    // The address is untouched, and the payer's creation lands.
    assertEquals(await c.getAccountInfo(mint, "confirmed"), null);
    const tx = decodeTx(built.transaction);
    tx.sign([wallet]);
    const sig = await c.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    const v = await (await h.request(`/v1/transactions/${sig}`, { headers: bearer(apiKey) }))
      .json();
    assertEquals([v.status, v.feeVerified], ["confirmed", true]);
  } finally {
    await h.close();
  }
});
