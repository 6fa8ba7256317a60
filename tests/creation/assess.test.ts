import { assertEquals } from "../support/assert.ts";
import {
  assessCreation,
  type LandedTransaction,
  SYSTEM_PROGRAM,
} from "../../src/creation/assess.ts";

const transfer = (lamports: bigint) => {
  const d = new Uint8Array(12);
  new DataView(d.buffer).setUint32(0, 2, true);
  new DataView(d.buffer).setBigUint64(4, lamports, true);
  return d;
};

// keys: 0 payer, 1 treasury, 2 mint, 3 ata, 4 reference, 5 system
const tx = (
  over: Partial<LandedTransaction> = {},
  fee = 500n,
  withRef = true,
): LandedTransaction => ({
  signature: "Sig",
  slot: 1,
  blockTime: 1,
  err: null,
  accountKeys: ["Payer", "Treasury", "Mint", "Ata", "Ref", SYSTEM_PROGRAM],
  instructions: [{
    programIdIndex: 5,
    accounts: withRef ? [0, 1, 4] : [0, 1],
    data: transfer(fee),
  }],
  preBalances: [],
  postBalances: [],
  preTokenBalances: [],
  postTokenBalances: [{
    accountIndex: 3,
    mint: "Mint",
    owner: "Payer",
    uiTokenAmount: { amount: "1000", decimals: 9 },
  }],
  ...over,
});

const b = {
  mint: "Mint",
  recipientTokenAccount: "Ata",
  supplyRaw: "1000",
  feeLamports: "500",
  treasury: "Treasury",
  reference: "Ref",
  decimals: 9,
  recipient: "Payer",
};

Deno.test("full supply and the quoted fee with the reference: confirmed", () => {
  assertEquals(assessCreation(b, tx()), {
    status: "confirmed",
    feeLamportsSeen: 500n,
    supplyRawSeen: 1000n,
    decimalsSeen: 9,
    recipientSeen: "Payer",
    problems: [],
  });
  // Paying more than quoted is fine.
  assertEquals(assessCreation(b, tx({}, 900n)).status, "confirmed");
});

Deno.test("a short fee, a missing reference or a missing fee: unverified, each named", () => {
  assertEquals(assessCreation(b, tx({}, 499n)).status, "unverified");
  const noRef = assessCreation(b, tx({}, 500n, false));
  assertEquals([noRef.status, "problems" in noRef && noRef.problems[0]], [
    "unverified",
    "no service fee with the build's reference in the transaction",
  ]);
  assertEquals(assessCreation(b, tx({ instructions: [] })).status, "unverified");
});

Deno.test("less than the full supply: unverified; an error: failed", () => {
  const short = tx({
    postTokenBalances: [{
      accountIndex: 3,
      mint: "Mint",
      uiTokenAmount: { amount: "999", decimals: 9 },
    }],
  });
  assertEquals(assessCreation(b, short).status, "unverified");
  assertEquals(
    assessCreation(b, tx({ err: { InstructionError: [5, { Custom: 0 }] } })).status,
    "failed",
  );
});

Deno.test("a fee transfer carrying a second reference pays for no build", () => {
  // keys 6 and 7: another build's reference, and a key the payer added for no reason.
  const keys = ["Payer", "Treasury", "Mint", "Ata", "Ref", SYSTEM_PROGRAM, "OtherRef", "Extra"];
  for (const accounts of [[0, 1, 4, 6], [0, 1, 6, 4], [0, 1, 4, 7]]) {
    const shared = tx({
      accountKeys: keys,
      instructions: [{ programIdIndex: 5, accounts, data: transfer(1000n) }],
    });
    assertEquals(assessCreation(b, shared).status, "unverified", JSON.stringify(accounts));
  }
  // Two transfers, each with its own reference, pay for both.
  const two = tx({
    accountKeys: keys,
    instructions: [
      { programIdIndex: 5, accounts: [0, 1, 6], data: transfer(500n) },
      { programIdIndex: 5, accounts: [0, 1, 4], data: transfer(500n) },
    ],
  });
  assertEquals(assessCreation(b, two).status, "confirmed");
  assertEquals(assessCreation({ ...b, reference: "OtherRef" }, two).status, "confirmed");
});

Deno.test("other decimals or another owner than the build's: unverified, what landed reported", () => {
  const other = (o: { decimals?: number; owner?: string }) =>
    tx({
      postTokenBalances: [{
        accountIndex: 3,
        mint: "Mint",
        owner: o.owner ?? "Payer",
        uiTokenAmount: { amount: "1000", decimals: o.decimals ?? 9 },
      }],
    });
  const dec = assessCreation(b, other({ decimals: 2 }));
  assertEquals(dec.status, "unverified");
  if (dec.status === "failed") throw new Error("unreachable");
  assertEquals([dec.decimalsSeen, dec.problems], [2, ["the mint has 2 decimals, expected 9"]]);
  const owner = assessCreation(b, other({ owner: "Someone" }));
  if (owner.status === "failed") throw new Error("unreachable");
  assertEquals([owner.status, owner.recipientSeen], ["unverified", "Someone"]);
});
