/**
 * litesvm hands transaction errors back as napi objects and bare enum numbers; this maps them to
 * the node's JSON form (src/solana/tx-error.ts), and remaps indexes of a rebuilt message.
 */
import {
  instructionError,
  IX_ERRORS,
  type IxErrorJson,
  TX_ERRORS,
  type TxErrorJson,
} from "../solana/tx-error.ts";

// litesvm error objects (napi classes); typed loosely because they are unrelated classes.
interface NapiIxErr {
  code?: number;
  msg?: string;
}
interface NapiTxErr {
  index?: number;
  accountIndex?: number;
  err?: () => number | NapiIxErr;
  constructor: { name: string };
}

function fromNapiIxError(e: number | NapiIxErr): IxErrorJson {
  if (typeof e === "number") {
    // Same order as litesvm's InstructionErrorFieldless (which has no Custom: that is a class).
    return IX_ERRORS[e]?.[0] ?? "GenericError";
  }
  if (typeof e.code === "number") return { Custom: e.code };
  return { BorshIoError: e.msg ?? "" };
}

export function fromNapiTxError(e: number | NapiTxErr): TxErrorJson {
  if (typeof e === "number") return TX_ERRORS[e]?.[0] ?? "SanitizeFailure";
  switch (e.constructor.name) {
    case "TransactionErrorInstructionError":
      return instructionError(e.index ?? 0, fromNapiIxError(e.err!()));
    case "TransactionErrorDuplicateInstruction":
      return { DuplicateInstruction: e.index ?? 0 };
    case "TransactionErrorInsufficientFundsForRent":
      return { InsufficientFundsForRent: { account_index: e.accountIndex ?? 0 } };
    case "TransactionErrorProgramExecutionTemporarilyRestricted":
      return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex ?? 0 } };
  }
  return "SanitizeFailure";
}

/** Rewrites instruction / account indexes of an error raised by a rebuilt (segment) message. */
export function remapTxError(
  err: TxErrorJson,
  ixIndex: (i: number) => number,
  accountIndex: (i: number) => number,
): TxErrorJson {
  if (typeof err === "string") return err;
  if ("InstructionError" in err) {
    const [i, e] = err.InstructionError as [number, IxErrorJson];
    return instructionError(ixIndex(i), e);
  }
  if ("DuplicateInstruction" in err) {
    return { DuplicateInstruction: ixIndex(err.DuplicateInstruction as number) };
  }
  if ("InsufficientFundsForRent" in err) {
    const i = (err.InsufficientFundsForRent as { account_index: number }).account_index;
    return { InsufficientFundsForRent: { account_index: accountIndex(i) } };
  }
  return err;
}
