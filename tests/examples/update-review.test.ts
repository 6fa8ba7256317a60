/**
 * The example client's review of an update (examples/create-token.ts, `reviewUpdate`), pure: a
 * transaction as the service builds it passes and lists each change as before -> after; one with
 * a second signer, another fee payer, a transfer the costs do not state, an unknown program, or
 * without the new uri is refused before signing, each problem named.
 */
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from "@solana/web3.js";
import { Buffer } from "node:buffer";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { reviewUpdate } from "../../examples/create-token.ts";

const METAPLEX = new PublicKey("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s");
const authority = Keypair.generate().publicKey;
const mint = Keypair.generate().publicKey;
const treasury = Keypair.generate().publicKey;
const view = {
  name: "Demo",
  symbol: "DEMO",
  uri: "https://example.com/a.json",
  updateAuthority: authority.toBase58(),
  isMutable: true,
  mintAuthority: null,
  freezeAuthority: null,
};
const built = {
  mint: mint.toBase58(),
  fee: { treasury: treasury.toBase58() },
  costs: { rentTopUpLamports: "0", serviceFeeLamports: "1000", totalLamports: "6000" },
  before: view,
  after: { ...view, uri: "https://example.com/b.json" },
};

function tx(extra: TransactionInstruction[] = [], payer = authority) {
  const t = new Transaction({
    feePayer: payer,
    recentBlockhash: "11111111111111111111111111111111",
  });
  t.add(ComputeBudgetProgram.setComputeUnitLimit({ units: 40_000 }));
  t.add(
    new TransactionInstruction({
      programId: METAPLEX,
      keys: [{ pubkey: authority, isSigner: true, isWritable: false }],
      data: Buffer.from(`\x0f${built.after.uri}`),
    }),
  );
  t.add(SystemProgram.transfer({ fromPubkey: authority, toPubkey: treasury, lamports: 1000 }));
  for (const ix of extra) t.add(ix);
  return t;
}

Deno.test("reviewUpdate: the built transaction passes and shows each change", () => {
  const r = reviewUpdate(tx(), built, authority.toBase58());
  assertEquals(r.problems, []);
  assertEquals(r.lines[0], "uri: https://example.com/a.json → https://example.com/b.json");
  assertEquals(reviewUpdate(tx(), built, authority.toBase58(), 5999n).problems.length, 1);
});

Deno.test("reviewUpdate: a transfer the costs do not state, another payer or signer, an unknown program, no new uri", () => {
  const thief = Keypair.generate().publicKey;
  const steal = SystemProgram.transfer({ fromPubkey: authority, toPubkey: thief, lamports: 1 });
  assertMatch(reviewUpdate(tx([steal]), built, authority.toBase58()).problems[0], /costs do not/);
  const other = Keypair.generate().publicKey;
  const cosign = new TransactionInstruction({
    programId: SystemProgram.programId,
    keys: [{ pubkey: other, isSigner: true, isWritable: true }],
    data: Buffer.from([9, 9, 9, 9]),
  });
  assertMatch(
    reviewUpdate(tx([cosign]), built, authority.toBase58()).problems.join(";"),
    /more than one signer/,
  );
  assertMatch(
    reviewUpdate(tx([], other), built, authority.toBase58()).problems.join(";"),
    /fee payer is not the authority/,
  );
  const unknown = new TransactionInstruction({
    programId: thief,
    keys: [],
    data: Buffer.alloc(0),
  });
  assertMatch(
    reviewUpdate(tx([unknown]), built, authority.toBase58()).problems[0],
    /unexpected program/,
  );
  const noUri = { ...built, after: { ...view, uri: "https://example.com/c.json" } };
  assertMatch(
    reviewUpdate(tx(), noUri, authority.toBase58()).problems.join(";"),
    /new uri is not in the transaction/,
  );
});
