/**
 * Transaction errors in the two forms a Solana node exposes them: the serde JSON value found in
 * `err` fields, and the Display text used in "Transaction simulation failed: ..." messages. The
 * service reads refusals back from the text; the embedded chain writes both forms from the same
 * tables, so what a test sees is what mainnet says.
 */

/** JSON shape, e.g. "BlockhashNotFound" or {"InstructionError":[0,{"Custom":1}]}. */
export type TxErrorJson = string | Record<string, unknown>;

/** Name and Display text; the index is the runtime's enum order, which litesvm reports. */
export const TX_ERRORS: readonly (readonly [string, string])[] = [
  ["AccountInUse", "Account in use"],
  ["AccountLoadedTwice", "Account loaded twice"],
  ["AccountNotFound", "Attempt to debit an account but found no record of a prior credit."],
  ["ProgramAccountNotFound", "Attempt to load a program that does not exist"],
  ["InsufficientFundsForFee", "Insufficient funds for fee"],
  ["InvalidAccountForFee", "This account may not be used to pay transaction fees"],
  ["AlreadyProcessed", "This transaction has already been processed"],
  ["BlockhashNotFound", "Blockhash not found"],
  ["CallChainTooDeep", "Loader call chain is too deep"],
  ["MissingSignatureForFee", "Transaction requires a fee but has no signature present"],
  ["InvalidAccountIndex", "Transaction contains an invalid account reference"],
  ["SignatureFailure", "Transaction did not pass signature verification"],
  ["InvalidProgramForExecution", "This program may not be used for executing instructions"],
  ["SanitizeFailure", "Transaction failed to sanitize accounts offsets correctly"],
  ["ClusterMaintenance", "Transactions are currently disabled due to cluster maintenance"],
  [
    "AccountBorrowOutstanding",
    "Transaction processing left an account with an outstanding borrowed reference",
  ],
  ["WouldExceedMaxBlockCostLimit", "Transaction would exceed max Block Cost Limit"],
  ["UnsupportedVersion", "Transaction version is unsupported"],
  ["InvalidWritableAccount", "Transaction loads a writable account that cannot be written"],
  ["WouldExceedMaxAccountCostLimit", "Transaction would exceed max account limit within the block"],
  [
    "WouldExceedAccountDataBlockLimit",
    "Transaction would exceed account data limit within the block",
  ],
  ["TooManyAccountLocks", "Transaction locked too many accounts"],
  ["AddressLookupTableNotFound", "Transaction loads an address table account that doesn't exist"],
  [
    "InvalidAddressLookupTableOwner",
    "Transaction loads an address table account with an invalid owner",
  ],
  [
    "InvalidAddressLookupTableData",
    "Transaction loads an address table account with invalid data",
  ],
  ["InvalidAddressLookupTableIndex", "Transaction address table lookup uses an invalid index"],
  [
    "InvalidRentPayingAccount",
    "Transaction leaves an account with a lower balance than rent-exempt minimum",
  ],
  ["WouldExceedMaxVoteCostLimit", "Transaction would exceed max Vote Cost Limit"],
  ["WouldExceedAccountDataTotalLimit", "Transaction would exceed total account data limit"],
  ["MaxLoadedAccountsDataSizeExceeded", "Transaction exceeded max loaded accounts data size cap"],
  ["ResanitizationNeeded", "ResanitizationNeeded"],
  [
    "InvalidLoadedAccountsDataSizeLimit",
    "LoadedAccountsDataSizeLimit set for transaction must be greater than 0.",
  ],
  ["UnbalancedTransaction", "Sum of account balances before and after transaction do not match"],
  ["ProgramCacheHitMaxLimit", "Program cache hit max limit"],
  ["CommitCancelled", "CommitCancelled"],
];
const TX_ERROR_TEXT = new Map(TX_ERRORS);

/** Index == litesvm's `InstructionErrorFieldless` value; the text is the node's Display. */
export const IX_ERRORS: readonly (readonly [string, string])[] = [
  ["GenericError", "generic instruction error"],
  ["InvalidArgument", "invalid program argument"],
  ["InvalidInstructionData", "invalid instruction data"],
  ["InvalidAccountData", "invalid account data for instruction"],
  ["AccountDataTooSmall", "account data too small for instruction"],
  ["InsufficientFunds", "insufficient funds for instruction"],
  ["IncorrectProgramId", "incorrect program id for instruction"],
  ["MissingRequiredSignature", "missing required signature for instruction"],
  ["AccountAlreadyInitialized", "instruction requires an uninitialized account"],
  ["UninitializedAccount", "instruction requires an initialized account"],
  ["UnbalancedInstruction", "sum of account balances before and after instruction do not match"],
  ["ModifiedProgramId", "instruction illegally modified the program id of an account"],
  [
    "ExternalAccountLamportSpend",
    "instruction spent from the balance of an account it does not own",
  ],
  ["ExternalAccountDataModified", "instruction modified data of an account it does not own"],
  ["ReadonlyLamportChange", "instruction changed the balance of a read-only account"],
  ["ReadonlyDataModified", "instruction modified data of a read-only account"],
  ["DuplicateAccountIndex", "instruction contains duplicate accounts"],
  ["ExecutableModified", "instruction changed executable bit of an account"],
  ["RentEpochModified", "instruction modified rent epoch of an account"],
  ["NotEnoughAccountKeys", "insufficient account keys for instruction"],
  [
    "AccountDataSizeChanged",
    "program other than the account's owner changed the size of the account data",
  ],
  ["AccountNotExecutable", "instruction expected an executable account"],
  [
    "AccountBorrowFailed",
    "instruction tries to borrow reference for an account which is already borrowed",
  ],
  ["AccountBorrowOutstanding", "instruction left account with an outstanding borrowed reference"],
  ["DuplicateAccountOutOfSync", "instruction modifications of multiply-passed account differ"],
  ["InvalidError", "program returned invalid error code"],
  ["ExecutableDataModified", "instruction changed executable accounts data"],
  ["ExecutableLamportChange", "instruction changed the balance of an executable account"],
  ["ExecutableAccountNotRentExempt", "executable accounts must be rent exempt"],
  ["UnsupportedProgramId", "Unsupported program id"],
  ["CallDepth", "Cross-program invocation call depth too deep"],
  ["MissingAccount", "An account required by the instruction is missing"],
  [
    "ReentrancyNotAllowed",
    "Cross-program invocation reentrancy not allowed for this instruction",
  ],
  ["MaxSeedLengthExceeded", "Length of the seed is too long for address generation"],
  ["InvalidSeeds", "Provided seeds do not result in a valid address"],
  ["InvalidRealloc", "Failed to reallocate account data"],
  ["ComputationalBudgetExceeded", "Computational budget exceeded"],
  ["PrivilegeEscalation", "Cross-program invocation with unauthorized signer or writable account"],
  ["ProgramEnvironmentSetupFailure", "Failed to create program execution environment"],
  ["ProgramFailedToComplete", "Program failed to complete"],
  ["ProgramFailedToCompile", "Program failed to compile"],
  ["Immutable", "Account is immutable"],
  ["IncorrectAuthority", "Incorrect authority provided"],
  ["AccountNotRentExempt", "An account does not have enough lamports to be rent-exempt"],
  ["InvalidAccountOwner", "Invalid account owner"],
  ["ArithmeticOverflow", "Program arithmetic overflowed"],
  ["UnsupportedSysvar", "Unsupported sysvar"],
  ["IllegalOwner", "Provided owner is not allowed"],
  [
    "MaxAccountsDataAllocationsExceeded",
    "Accounts data allocations exceeded the maximum allowed per transaction",
  ],
  ["MaxAccountsExceeded", "Max accounts exceeded"],
  ["MaxInstructionTraceLengthExceeded", "Max instruction trace length exceeded"],
  ["BuiltinProgramsMustConsumeComputeUnits", "Builtin programs must consume compute units"],
  ["BorshIoError", "Failed to serialize or deserialize account data"],
];
const IX_ERROR_TEXT = new Map(IX_ERRORS);

export type IxErrorJson = string | { Custom: number } | { BorshIoError: string };

export function instructionError(index: number, err: IxErrorJson): TxErrorJson {
  return { InstructionError: [index, err] };
}

function ixErrorText(e: IxErrorJson): string {
  if (typeof e === "string") return IX_ERROR_TEXT.get(e) ?? e;
  if ("Custom" in e) return `custom program error: 0x${e.Custom.toString(16)}`;
  return `Failed to serialize or deserialize account data: ${e.BorshIoError}`;
}

/** Display text of a transaction error, as in the node's error messages. */
export function txErrorText(err: TxErrorJson): string {
  if (typeof err === "string") return TX_ERROR_TEXT.get(err) ?? err;
  if ("InstructionError" in err) {
    const [i, e] = err.InstructionError as [number, IxErrorJson];
    return `Error processing Instruction ${i}: ${ixErrorText(e)}`;
  }
  if ("DuplicateInstruction" in err) {
    return `Transaction contains a duplicate instruction (${err.DuplicateInstruction}) that is not allowed`;
  }
  if ("InsufficientFundsForRent" in err) {
    const i = (err.InsufficientFundsForRent as { account_index: number }).account_index;
    return `Transaction results in an account (${i}) with insufficient funds for rent`;
  }
  if ("ProgramExecutionTemporarilyRestricted" in err) {
    const i = (err.ProgramExecutionTemporarilyRestricted as { account_index: number })
      .account_index;
    return `Execution of the program referenced by account at index ${i} is temporarily restricted.`;
  }
  return JSON.stringify(err);
}

const TX_ERROR_BY_TEXT = new Map(TX_ERRORS.map(([name, text]) => [text, name]));
const IX_ERROR_BY_TEXT = new Map(IX_ERRORS.map(([name, text]) => [text, name]));

/**
 * The JSON form of an error from its Display text, as in "Transaction simulation failed: Error
 * processing Instruction 4: custom program error: 0x5" (clients such as web3.js keep only the
 * text of a refused send); null when the text is not one of the node's.
 */
export function parseTxErrorText(text: string): TxErrorJson | null {
  const whole = text.replace(/^Transaction simulation failed: /, "").trim();
  const exact = TX_ERROR_BY_TEXT.get(whole);
  if (exact) return exact;
  const t = whole.replace(/\.$/, "");
  const ix = /^Error processing Instruction (\d+): (.*)$/s.exec(t);
  if (ix) {
    const index = Number(ix[1]);
    const custom = /^custom program error: 0x([0-9a-f]+)$/i.exec(ix[2]);
    if (custom) return instructionError(index, { Custom: parseInt(custom[1], 16) });
    const name = IX_ERROR_BY_TEXT.get(ix[2]);
    return name ? instructionError(index, name) : null;
  }
  const rent = /^Transaction results in an account \((\d+)\) with insufficient funds for rent$/
    .exec(t);
  if (rent) return { InsufficientFundsForRent: { account_index: Number(rent[1]) } };
  return TX_ERROR_BY_TEXT.get(t) ?? null;
}
