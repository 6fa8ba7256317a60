import { assertEquals } from "../support/assert.ts";
import { parseTxErrorText, txErrorText } from "../../src/solana/tx-error.ts";
import { describeTransactionError } from "../../src/solana/transaction-error.ts";

const META = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s";
const SYS = "11111111111111111111111111111111";

Deno.test("the node's error texts read back to the errors they print", () => {
  for (
    const err of [
      "AccountNotFound",
      "BlockhashNotFound",
      "InsufficientFundsForFee",
      { InstructionError: [4, { Custom: 199 }] },
      { InstructionError: [2, { Custom: 0 }] },
      { InstructionError: [5, "ProgramFailedToComplete"] },
      { InstructionError: [5, "ComputationalBudgetExceeded"] },
      { InsufficientFundsForRent: { account_index: 0 } },
    ]
  ) {
    assertEquals(parseTxErrorText(`Transaction simulation failed: ${txErrorText(err)}`), err);
    assertEquals(parseTxErrorText(`${txErrorText(err)}.`), err);
  }
  assertEquals(parseTxErrorText("Simulation failed. "), null);
});

Deno.test("a failure is named by instruction, program, code and the program's own words", () => {
  const program = (i: number) => (i === 4 ? META : SYS);
  // The Token Metadata program's own error table (from mpl-token-metadata).
  assertEquals(
    describeTransactionError({ InstructionError: [4, { Custom: 199 }] }, program, [
      `Program ${META} invoke [1]`,
      "Program log: Expected account to be uninitialized",
      `Program ${META} failed: custom program error: 0xc7`,
    ]),
    {
      index: 4,
      program: META,
      raisedBy: META,
      code: 199,
      name: "ExpectedUninitializedAccount",
      message: "Expected account to be uninitialized",
    },
  );
  // Raised by the System Program inside the metadata program's levy: its code, its words.
  const levy = describeTransactionError({ InstructionError: [4, { Custom: 1 }] }, program, [
    `Program ${META} invoke [1]`,
    `Program ${SYS} invoke [2]`,
    "Transfer: insufficient lamports 5, need 15115600",
    `Program ${SYS} failed: custom program error: 0x1`,
    `Program ${META} consumed 8000 of 200000 compute units`,
    `Program ${META} failed: custom program error: 0x1`,
  ]);
  assertEquals([levy.program, levy.raisedBy, levy.code, levy.name, levy.message], [
    META,
    SYS,
    1,
    null,
    "Transfer: insufficient lamports 5, need 15115600",
  ]);
  // Transaction-level: no instruction, the runtime's words.
  assertEquals(describeTransactionError("InsufficientFundsForFee", program, []), {
    index: null,
    program: null,
    raisedBy: null,
    code: "InsufficientFundsForFee",
    name: null,
    message: "Insufficient funds for fee",
  });
});
