/**
 * Refusing names and symbols that impersonate well-known projects, on both POST /v1/tokens and
 * POST /v1/metadata.
 *
 * The look-alike data is Unicode's own: the `unhomoglyph` package (pure JS, no native code, so it
 * runs on Deno Deploy) carries the UTS #39 confusables.txt mapping, which folds whole alphabets a
 * hand-kept table missed (Lisu "ꓢꓳꓡ", Cherokee "ᏚᎾᏞ", Armenian "ՍՏDC", Coptic "SⲞL"). Around
 * it, this module keeps only the rules the data does not give:
 *
 * - The UTS #39 skeleton (NFD, map, NFD) after NFKC (fullwidth, circled and styled letters), with
 *   combining marks and default-ignorable characters dropped ("BOƝK", "JUP\u0301"), compared
 *   case-insensitively: the skeleton is taken of the name as written, upper-cased and lower-cased,
 *   because confusables.txt is case-sensitive ("I" folds to "l", "i" does not, "L" is "L").
 * - Decorations count as the name: symbols, punctuation, spaces, superscripts and other
 *   compatibility numbers ("USDC™", "SOL²", "USDC!", "S.O.L", "Wrapped-SOL") are dropped, and one
 *   of them may stand for a letter ("$OL", "U$DC") when at least two real letters are beside it.
 * - Mixed-script rule (UTS #39 section 5): in a name whose letters mix scripts, a letter the data
 *   did not fold to Latin and that is not of the script the name is read in (its own majority
 *   script, or Latin: the whole-script case, "ⲂⲞⲚⲔ" whose Ⲛ and Ⲕ no data maps), and a Latin
 *   letter of phonetic use only (small capitals such as "ᴅ"), can stand for any one letter while
 *   letters that do read as Latin outnumber them: "BOИK" (Cyrillic И) is BONK. Han, kana, Hangul
 *   and Bopomofo mix with Latin legitimately and are never wildcards.
 * - Confusions the data does not hold, because they depend on the font rather than the code
 *   point: "i" reads as "l", "I" and "1" ("Soiana", "SOIANA" beside "Solana"), "o" as "0", "rn"
 *   as "m", "vv" as "w" and "cl" as "d" (CONFUSIONS). Both sides are folded, so one such edit
 *   matches, and so do several.
 */
import unhomoglyph from "unhomoglyph";

/** Scripts told apart for the mixed-script rule; a letter of none of them is "Other". */
const SCRIPTS = [
  "Latin",
  "Greek",
  "Cyrillic",
  "Armenian",
  "Georgian",
  "Cherokee",
  "Lisu",
  "Coptic",
  "Hebrew",
  "Arabic",
  "Canadian_Aboriginal",
  "Tifinagh",
  "Vai",
  "Bamum",
  "Ethiopic",
  "Runic",
  "Ogham",
  "Glagolitic",
  "Old_Italic",
  "Gothic",
  "Deseret",
  "Osage",
  "Adlam",
  "Devanagari",
  "Bengali",
  "Thai",
  "Han",
  "Hiragana",
  "Katakana",
  "Hangul",
  "Bopomofo",
].map((name) => ({ name, re: new RegExp(`^\\p{Script=${name}}$`, "u") }));

/** Scripts that UTS #39's "highly restrictive" level lets mix with Latin. */
const MIXES_WITH_LATIN = new Set(["Han", "Hiragana", "Katakana", "Hangul", "Bopomofo"]);

/** Latin letters of phonetic use only (IPA and phonetic extensions): no ordinary word has them. */
const PHONETIC_LATIN = /[\u0250-\u02af\u1d00-\u1dbf]/u;

/** Superscripts, subscripts, modifier letters and other compatibility numbers: decoration. */
const DECORATION_ALWAYS = /[\p{No}\p{Lm}]/u;
const DECORATION = /^[\p{S}\p{P}\p{Z}]+$/u;
const DROPPED = /[\p{M}\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}]/gu;

type Piece =
  /** `ascii`: the data folded it to plain Latin letters or digits, so it reads as they do. */
  | { kind: "letters"; text: string; script: string; ascii: boolean }
  | { kind: "decoration" };

function scriptOf(ch: string): string {
  for (const s of SCRIPTS) if (s.re.test(ch)) return s.name;
  return "Other";
}

/**
 * The UTS #39 skeleton of one character after NFKC, marks and invisibles dropped. Not lower-cased:
 * "I" folds to "l", so lower-casing afterwards would make "DAL" the skeleton of "DAI".
 */
function foldText(s: string): string {
  return unhomoglyph(s.normalize("NFKC").normalize("NFD")).normalize("NFD").replace(DROPPED, "");
}

function pieces(input: string): Piece[] {
  const out: Piece[] = [];
  for (const ch of input.normalize("NFC")) {
    const compat = ch.normalize("NFKC");
    // "™" is NFKC "TM" and "²" is "2": decorations, not the letters they expand to.
    if (
      DECORATION_ALWAYS.test(ch) || (/\p{S}/u.test(ch) && [...compat].length > 1) ||
      DECORATION.test(compat)
    ) {
      out.push({ kind: "decoration" });
      continue;
    }
    const text = foldText(ch);
    if (text === "") continue;
    if (DECORATION.test(text)) {
      out.push({ kind: "decoration" });
      continue;
    }
    const letter = [...compat.normalize("NFD")][0] ?? ch;
    const script = PHONETIC_LATIN.test(ch) ? "Phonetic" : scriptOf(letter);
    out.push({ kind: "letters", text, script, ascii: /^[A-Za-z0-9]+$/.test(text) });
  }
  return out;
}

const plain = (ps: Piece[]) => ps.map((p) => (p.kind === "letters" ? p.text : "")).join("");

/**
 * The three case forms a name is compared in (see the module comment): two names match when any
 * form of one has the skeleton of any form of the other.
 */
const caseForms = (s: string) => [...new Set([s, s.toUpperCase(), s.toLowerCase()])];

/**
 * The skeleton of a name: what is left once everything a reader can't tell apart is removed
 * (decorations included). Two names with the same skeleton are the same name.
 */
export function skeleton(input: string): string {
  // One case form, so "usdc" and "USDC" share a key (the admin list dedupes and removes by it).
  return plain(pieces(input.toUpperCase()));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Patterns for the wildcard rules: letters of a minority script (or phonetic Latin) stand for one
 * letter each; one decoration at a time may stand for one letter. A pattern is tried only when
 * its literal letters outnumber its wildcards, so a string of emoji resembles nothing.
 */
function wildcardPatterns(ps: Piece[]): { re: RegExp; length: number }[] {
  const letters = ps.filter((p): p is Extract<Piece, { kind: "letters" }> => p.kind === "letters");
  const counts = new Map<string, number>();
  for (const p of letters) counts.set(p.script, (counts.get(p.script) ?? 0) + 1);
  const scripts = [...counts.keys()].filter((s) => s !== "Phonetic");
  // Latin is always tried as the base: the listed names are read as Latin, and a word of Coptic or
  // Cherokee letters most of which the data folds to Latin ones ("ⲂⲞⲚⲔ") is read the same way.
  const bases = [...new Set([...scripts, "Latin"])];
  const out: { re: RegExp; length: number }[] = [];
  for (const base of bases) {
    // A letter the data already folded to plain Latin is compared as such; only letters it left
    // alone can be wildcards.
    const foreign = (p: Piece) =>
      p.kind === "letters" && !p.ascii && p.script !== base &&
      !(MIXES_WITH_LATIN.has(p.script) || (MIXES_WITH_LATIN.has(base) && p.script === "Latin"));
    const wild = ps.filter(foreign).length;
    const literal = letters.filter((p) => !foreign(p)).reduce((n, p) => n + [...p.text].length, 0);
    const decorations = ps.map((p, i) => (p.kind === "decoration" ? i : -1)).filter((i) => i >= 0);
    const variants = [-1, ...decorations.slice(0, 8)];
    for (const sub of variants) {
      const wildcards = wild + (sub >= 0 ? 1 : 0);
      if (wildcards === 0 || wildcards >= literal) continue;
      const src = ps.map((p, i) => {
        if (i === sub) return ".";
        if (p.kind === "decoration") return "";
        return foreign(p) ? "." : escape(p.text);
      }).join("");
      // Each wildcard is one code point, so the pattern only fits keys of one length.
      out.push({ re: new RegExp(`^${src}$`, "u"), length: literal + wildcards });
    }
  }
  return out;
}

/**
 * Letters and pairs that read as one another in common fonts, folded to one of them. The data
 * already folds "I", "1" and "|" to "l", "0" to "O" and "m" to "rn"; these add the lower-case "i"
 * to that class, "o" to "0", and "vv", "cl" to "w", "d". An upper-case "L" is not in the class: in
 * capitals "DAL" does not read as "DAI".
 */
const CONFUSIONS: [RegExp, string][] = [
  [/rn/g, "m"],
  [/vv/g, "w"],
  [/VV/g, "W"],
  [/cl/g, "d"],
  [/[Iil1|]/g, "\u2113"],
  [/0/g, "o"],
];

/**
 * A skeleton with the CONFUSIONS folded, then lower-cased: two names read alike, whatever the case
 * a wallet shows them in, when their folds are equal. Applied to a value as written only, since
 * lower-casing "DAL" would put its "L" in the class.
 */
export function confusionFold(key: string): string {
  let out = key;
  for (const [re, to] of CONFUSIONS) out = out.replace(re, to);
  return out.toLowerCase();
}

/** The field message for a value that resembles the listed name `hit`. */
export const wellKnownMessage = (hit: string) =>
  `too close to the well-known project "${hit}"; names of well-known projects are refused`;

export interface WellKnownMatcher {
  /** The list entry `value` impersonates, or null. */
  match(value: string): string | null;
}

export function wellKnownMatcher(
  names: readonly string[],
  opts: { confusions?: boolean } = {},
): WellKnownMatcher {
  const byKey = new Map<string, string>();
  for (const n of names) {
    for (const form of caseForms(n)) {
      const k = plain(pieces(form));
      if (k && !byKey.has(k)) byKey.set(k, n);
    }
  }
  const byFolded = new Map<string, string>();
  for (const [k, n] of byKey) {
    const folded = confusionFold(k);
    if (!byFolded.has(folded)) byFolded.set(folded, n);
  }
  const keysByLength = new Map<number, string[]>();
  for (const k of byKey.keys()) {
    const n = [...k].length;
    keysByLength.set(n, [...(keysByLength.get(n) ?? []), k]);
  }
  return {
    match(value) {
      const forms = caseForms(value).map(pieces);
      for (const ps of forms) {
        const k = plain(ps);
        const hit = k ? byKey.get(k) : undefined;
        if (hit) return hit;
      }
      for (const ps of forms) {
        for (const { re, length } of wildcardPatterns(ps)) {
          const k = keysByLength.get(length)?.find((key) => re.test(key));
          if (k) return byKey.get(k)!;
        }
      }
      if (opts.confusions === false) return null;
      const asWritten = plain(forms[0]);
      return (asWritten && byFolded.get(confusionFold(asWritten))) || null;
    },
  };
}
