/**
 * The Metaplex Token Metadata program as deployed on mainnet, a program dump kept beside the
 * checkout (`../shared/fixtures/mpl_token_metadata.so`, see docs/chain.md), never inside it. On a
 * fresh clone it is absent: tests that need it are ignored and one line says why.
 */
export const METAPLEX_FIXTURE_RELATIVE = "../shared/fixtures/mpl_token_metadata.so";

function locate(): string | null {
  const path = new URL(`../../${METAPLEX_FIXTURE_RELATIVE}`, import.meta.url).pathname;
  try {
    return Deno.statSync(path).isFile ? path : null;
  } catch {
    return null;
  }
}

/** Absolute path of the program dump, or null where it is absent. */
export const METAPLEX_SO: string | null = locate();

let told = false;

/**
 * Options for a Deno.test that needs the real program: ignored without it, with one line naming
 * the missing file (printed once per test module).
 */
export function needsMetaplexSo(): { ignore: boolean } {
  if (!METAPLEX_SO && !told) {
    told = true;
    console.log(
      `skipping tests against the real Token Metadata program: ${METAPLEX_FIXTURE_RELATIVE} ` +
        "is not beside this checkout (see docs/chain.md)",
    );
  }
  return { ignore: !METAPLEX_SO };
}

/** The two ways the embedded chain can run the program: emulated, and the real binary. */
export const METADATA_PROGRAM_MODES: { mode: "emulated" | "real"; so: string | undefined }[] = [
  { mode: "emulated", so: undefined },
  { mode: "real", so: METAPLEX_SO ?? undefined },
];
