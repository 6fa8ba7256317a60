/**
 * Which Token Metadata program the embedded chain runs, and the start-log line that says so.
 * Apart from the chain so that the service can name it without loading litesvm.
 */
export type TokenMetadataProgramInfo =
  | { mode: "emulated" }
  | { mode: "loaded"; path: string; sha256: string };

/** One line for a start log: which Token Metadata program the embedded chain runs. */
export function describeTokenMetadataProgram(p: TokenMetadataProgramInfo): string {
  return p.mode === "emulated"
    ? "Token Metadata program: emulated (set TOKEN_METADATA_PROGRAM_SO to load the deployed " +
      "program's binary)"
    : `Token Metadata program: loaded from ${p.path} (sha256 ${p.sha256})`;
}
