/**
 * Says why the network refused a transaction, in a form a client can act on: which instruction
 * (index and program), which error (the program's custom code, or the runtime's error name) and
 * its message. The message comes from the program's own error table where a library publishes it
 * (mpl-token-metadata), else from the program's last log line before it failed (the System and
 * SPL programs log their reason), else the runtime's text for the error.
 */
import { getMplTokenMetadataErrorFromCode } from "@metaplex-foundation/mpl-token-metadata";
import { TOKEN_METADATA_PROGRAM_ID } from "./token-metadata.ts";
import { txErrorText } from "./tx-error.ts";

export interface FailedInstruction {
  /** Index of the failing instruction in the message; null for transaction-level errors. */
  index: number | null;
  /** The failing instruction's program (base58); null when not known. */
  program: string | null;
  /** The program that raised the error, when a program it called did (e.g. the System Program). */
  raisedBy: string | null;
  /** A program's custom error code, or the runtime's error name (e.g. "ProgramFailedToComplete"). */
  code: number | string;
  /** The error's name where the program publishes one (e.g. "ExpectedUninitializedAccount"). */
  name: string | null;
  message: string;
}

const METADATA_PROGRAM = TOKEN_METADATA_PROGRAM_ID.toBase58();

/**
 * @param err the transaction error as JSON-RPC returns it (`{"InstructionError":[4,{"Custom":5}]}`)
 * @param programOf the program id of instruction i of the transaction
 */
export function describeTransactionError(
  err: unknown,
  programOf: (index: number) => string | null,
  logs: readonly string[],
): FailedInstruction {
  const ie = (err as { InstructionError?: [number, unknown] } | null)?.InstructionError;
  if (!ie) {
    const code = typeof err === "string"
      ? err
      : err && typeof err === "object"
      ? Object.keys(err)[0] ?? "Unknown"
      : "Unknown";
    return {
      index: null,
      program: null,
      raisedBy: null,
      code,
      name: null,
      message: txErrorText((err ?? "Unknown") as string),
    };
  }
  const [index, inner] = ie;
  const program = programOf(index);
  const custom = (inner as { Custom?: number } | null)?.Custom;
  const runtimeText = txErrorText({ InstructionError: [index, inner] }).replace(
    /^Error processing Instruction \d+: /,
    "",
  );
  // The first program that logs a failure is the one that raised the error; the ones above it
  // only pass it on.
  const raisedBy = logs.map((l) => /^Program (\S+) failed: /.exec(l)?.[1]).find(Boolean) ??
    program;
  if (typeof custom === "number") {
    const published = raisedBy === METADATA_PROGRAM ? metadataError(custom) : null;
    return {
      index,
      program,
      raisedBy,
      code: custom,
      name: published?.name ?? null,
      message: published?.message ?? lastProgramLog(logs, raisedBy) ?? runtimeText,
    };
  }
  const code = typeof inner === "string"
    ? inner
    : inner && typeof inner === "object"
    ? Object.keys(inner)[0] ?? "Unknown"
    : "Unknown";
  return {
    index,
    program,
    raisedBy,
    code,
    name: null,
    message: lastProgramLog(logs, raisedBy) ?? runtimeText,
  };
}

function metadataError(code: number): { name: string; message: string } | null {
  const e = getMplTokenMetadataErrorFromCode(
    code,
    {
      name: "mplTokenMetadata",
      publicKey: METADATA_PROGRAM,
    } as Parameters<typeof getMplTokenMetadataErrorFromCode>[1],
  );
  return e ? { name: e.name, message: e.message.split("\n\nSource:")[0].trim() } : null;
}

/**
 * The last thing the failing program (or a program it called) said before failing: the last
 * "Program log:" line, or a System Program reason line, before the program's "failed" line.
 */
function lastProgramLog(logs: readonly string[], program: string | null): string | null {
  let end = logs.length;
  if (program) {
    const failed = logs.findIndex((l) => l.startsWith(`Program ${program} failed`));
    if (failed >= 0) end = failed;
  }
  for (let i = end - 1; i >= 0; i--) {
    const l = logs[i];
    if (/^Program \S+ (invoke|success|consumed|return)/.test(l)) continue;
    if (/^Program \S+ failed: /.test(l)) continue;
    const text = l.replace(/^Program log: /, "").replace(/^Error: /, "").trim();
    if (text) return text;
  }
  return null;
}

/** One line for an error message: "instruction 4 (<program>): <message>". */
export function failureSummary(f: FailedInstruction): string {
  if (f.index === null) return f.message;
  return `instruction ${f.index}${f.program ? ` (${f.program})` : ""}: ${f.message}`;
}
