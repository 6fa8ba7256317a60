/**
 * The classic program stays exactly what it was, and the new request fields are checked like
 * the old ones (400 naming every bad field).
 */
import { Keypair, PublicKey, SystemProgram, TransactionMessage } from "@solana/web3.js";
import { MINT_SIZE, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assertEquals } from "../support/assert.ts";
import {
  compileToken,
  deriveAddresses,
  tokenInstructions,
  type TokenPlan,
} from "../../src/tokens/transaction.ts";
import { mintAccountInstructions } from "../../src/tokens/mint-account.ts";
import { parseBuildRequest } from "../../src/tokens/request-schema.ts";
import { ApiError } from "../../src/kernel/errors.ts";

const key = (n: number) => new PublicKey(new Uint8Array(32).fill(n));
const hex = (b: ArrayBuffer) =>
  Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");

/**
 * SHA-256 of the message the classic build compiled before Token-2022 support existed (recorded
 * from commit 8d7a9e1's src/tokens/transaction.ts with exactly these inputs).
 */
const BEFORE_TOKEN_2022: Record<string, string> = {
  "false,false": "7a83249cbdf72662a0103f067653f9d7ef9d46f975a70b67f50d6729b1946cad",
  "false,true": "d3bfe7adb79f2b063a1f1c5387a5c4695ad4e5d51690c8ca50faf91f007169cc",
  "true,false": "5456582a1b7b0eb3458ec531d1227e5c2541ad593b3d1fcb1f5185ce315ad7d3",
  "true,true": "c13ab02d39824a19575ba6afe34da3f857aeef2ba3783da29d65e756e79f3e40",
};

Deno.test("spl-token (the default, or named) compiles byte for byte what it did before Token-2022", async () => {
  const payer = Keypair.fromSeed(new Uint8Array(32).fill(7)).publicKey;
  const recipient = Keypair.fromSeed(new Uint8Array(32).fill(8)).publicKey;
  const seed = "0123456789abcdef0123456789abcdef";
  for (const named of [false, true]) {
    const addr = named
      ? await deriveAddresses(payer, seed, recipient, "spl-token")
      : await deriveAddresses(payer, seed, recipient);
    for (const revokeMint of [false, true]) {
      for (const immutableMetadata of [false, true]) {
        const plan: TokenPlan = {
          ...addr,
          payer,
          recipient,
          seed,
          reference: key(9),
          treasury: key(10),
          name: "Golden Token",
          symbol: "GOLD",
          uri: "https://example.com/g.json",
          decimals: 9,
          supplyRaw: 10n ** 18n,
          revokeMint,
          revokeFreeze: !revokeMint,
          immutableMetadata,
          feeLamports: 19_933_334n,
          mintRentLamports: 1_461_600n,
          ...(named ? { tokenProgram: "spl-token" as const } : {}),
        };
        const budget = { unitLimit: 123_456, microLamportsPerUnit: 789n };
        const c = compileToken(plan, budget, key(11).toBase58());
        // Since then the mint is funded and allocated (mint-account.ts) instead of created, so
        // lamports sent to its address cannot make the build fail: with CreateAccountWithSeed
        // put back in place of those two, the message is byte for byte what it was.
        const ixs = tokenInstructions(plan, budget);
        assertEquals(
          ixs.slice(2, 4),
          mintAccountInstructions({
            payer,
            mint: addr.mint,
            seed,
            lamports: 1_461_600n,
            space: MINT_SIZE,
            tokenProgram: TOKEN_PROGRAM_ID,
          }),
        );
        const created = SystemProgram.createAccountWithSeed({
          fromPubkey: payer,
          basePubkey: payer,
          seed,
          newAccountPubkey: addr.mint,
          lamports: 1_461_600,
          space: MINT_SIZE,
          programId: TOKEN_PROGRAM_ID,
        });
        const before = new TransactionMessage({
          payerKey: payer,
          recentBlockhash: key(11).toBase58(),
          instructions: [...ixs.slice(0, 2), created, ...ixs.slice(4)],
        }).compileToLegacyMessage().serialize();
        const digest = hex(await crypto.subtle.digest("SHA-256", new Uint8Array(before)));
        assertEquals(digest, BEFORE_TOKEN_2022[`${revokeMint},${immutableMetadata}`]);
        assertEquals(
          Array.from(c.messageBytes),
          Array.from(
            new TransactionMessage({
              payerKey: payer,
              recentBlockhash: key(11).toBase58(),
              instructions: ixs,
            }).compileToLegacyMessage().serialize(),
          ),
        );
      }
    }
  }
});

const matcher = { match: () => null };
const PAYER = Keypair.fromSeed(new Uint8Array(32).fill(7)).publicKey.toBase58();
const base = {
  payer: PAYER,
  name: "Cat",
  symbol: "CAT",
  metadataUri: "https://example.com/m.json",
  supply: "1",
};
const fieldsOf = (body: unknown): Record<string, unknown> => {
  try {
    parseBuildRequest(body, matcher);
  } catch (e) {
    if (e instanceof ApiError) return e.fields;
    throw e;
  }
  return {};
};

Deno.test("tokenProgram: spl-token by default; token-2022 named; anything else is 400", () => {
  assertEquals(parseBuildRequest(base, matcher).tokenProgram, "spl-token");
  assertEquals(
    parseBuildRequest({ ...base, tokenProgram: "token-2022" }, matcher).tokenProgram,
    "token-2022",
  );
  assertEquals(Object.keys(fieldsOf({ ...base, tokenProgram: "token2022" })), ["tokenProgram"]);
});

Deno.test("transferFee: Token-2022 only, basis points 0..10000, maximum a u64", () => {
  const fee = { basisPoints: 100, maximum: "1000" };
  const t22 = { ...base, tokenProgram: "token-2022" };
  const parsed = parseBuildRequest({ ...t22, transferFee: fee }, matcher);
  assertEquals(parsed.transferFee, { basisPoints: 100, maximum: 1000n, permanent: false });
  assertEquals(
    parseBuildRequest({ ...t22, transferFee: { ...fee, permanent: true } }, matcher).transferFee
      ?.permanent,
    true,
  );
  // Named whatever else is wrong, and for the classic program too.
  for (
    const body of [{ ...base, transferFee: fee }, {
      ...base,
      tokenProgram: "spl-token",
      transferFee: fee,
    }]
  ) {
    const f = fieldsOf(body);
    assertEquals(Object.keys(f), ["transferFee"]);
    assertEquals(String(f.transferFee).includes("token-2022"), true);
  }
  assertEquals(
    Object.keys(fieldsOf({ ...t22, transferFee: { basisPoints: 10_001, maximum: "1" } })),
    [
      "transferFee.basisPoints",
    ],
  );
  assertEquals(Object.keys(fieldsOf({ ...t22, transferFee: { basisPoints: 1.5, maximum: "1" } })), [
    "transferFee.basisPoints",
  ]);
  assertEquals(
    Object.keys(
      fieldsOf({ ...t22, transferFee: { basisPoints: 0, maximum: "18446744073709551616" } }),
    ),
    ["transferFee.maximum"],
  );
  assertEquals(Object.keys(fieldsOf({ ...t22, transferFee: { basisPoints: 0, maximum: 5 } })), [
    "transferFee.maximum",
  ]);
  assertEquals(
    Object.keys(fieldsOf({ ...t22, transferFee: { basisPoints: 0, maximum: "1", x: 1 } })),
    [
      "transferFee.x",
    ],
  );
  // The edges are accepted.
  assertEquals(
    parseBuildRequest({
      ...t22,
      transferFee: { basisPoints: 10_000, maximum: "18446744073709551615" },
    }, matcher)
      .transferFee?.maximum,
    (1n << 64n) - 1n,
  );
});

Deno.test("vanity: base58 only, at most 4 characters in total, the limit named", () => {
  assertEquals(
    parseBuildRequest({ ...base, vanity: { prefix: "ab", suffix: "cd" } }, matcher).vanity,
    {
      prefix: "ab",
      suffix: "cd",
      ignoreCase: false,
    },
  );
  const tooLong = fieldsOf({ ...base, vanity: { prefix: "abc", suffix: "de" } });
  assertEquals(Object.keys(tooLong), ["vanity"]);
  assertEquals(String(tooLong.vanity).includes("at most 4 characters"), true);
  assertEquals(Object.keys(fieldsOf({ ...base, vanity: {} })), ["vanity"]);
  // 0, O, I and l are not base58; with ignoreCase, a character whose other case is base58 is fine.
  for (const bad of ["0", "O", "I", "l", "-", "é"]) {
    assertEquals(
      Object.keys(fieldsOf({ ...base, vanity: { prefix: bad } })),
      ["vanity.prefix"],
      bad,
    );
  }
  assertEquals(Object.keys(fieldsOf({ ...base, vanity: { suffix: "x0" } })), ["vanity.suffix"]);
  assertEquals(
    parseBuildRequest({ ...base, vanity: { prefix: "O", ignoreCase: true } }, matcher).vanity
      ?.prefix,
    "O",
  );
  assertEquals(Object.keys(fieldsOf({ ...base, vanity: { prefix: "0", ignoreCase: true } })), [
    "vanity.prefix",
  ]);
  assertEquals(Object.keys(fieldsOf({ ...base, vanity: "abc" })), ["vanity"]);
});
