/**
 * The rules every text field a caller gives us obeys, in one place: token names and symbols (on
 * chain and in hosted documents), descriptions, attribute names and values. Hand-written because
 * they are policy, not a data set: the character classes come from the Unicode properties the
 * regex engine knows (Cc, Cf, Zs, Default_Ignorable_Code_Point), and the few characters that draw
 * nothing without being default-ignorable are listed.
 *
 * - Well-formed UTF-16 only: a lone surrogate half cannot be encoded as UTF-8, so the chain would
 *   carry U+FFFD while the record kept the half, and the two would disagree.
 * - No control characters (a description keeps tab and newlines): NUL pads names on chain and
 *   readers strip it; the others only hide text.
 * - No bidi embeddings, overrides or isolates anywhere: "\u202ECDSU" reads as USDC.
 * - No line or paragraph separators (U+2028, U+2029) in one-line fields (names, symbols,
 *   attribute names and values): they are not control characters, yet render as line breaks, so
 *   a name could show as two lines. A description may keep them, as it keeps newlines.
 * - Names and symbols: nothing that renders blank or not at all (Hangul fillers, the blank braille
 *   pattern, invisible operators, zero-width spaces, tag characters), so a name made of them is
 *   not "not blank", and a symbol's "no spaces" covers every character that renders as a space or
 *   as nothing. The zero-width joiners and the emoji variation selectors stay allowed in names
 *   (emoji sequences and several scripts need them); a symbol, a ticker, has no use for joiners.
 */

export type TextKind = "name" | "symbol" | "line" | "multiline";

const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_NEWLINES = /[^\P{Cc}\n\r\t]/u;
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/u;
const LINE_SEPARATORS = /[\u2028\u2029]/u;

/**
 * Drawn as nothing or as an empty cell: default-ignorable code points (zero-width spaces, fillers,
 * invisible operators, tags, variation selectors) plus the blank braille pattern and the Hangul
 * fillers, which fonts draw as an empty box of a letter's width.
 */
const BLANK = /[\p{Default_Ignorable_Code_Point}\u2800\u115f\u1160\u3164\uffa0]/u;
/** What a name may keep of the above: the joiners and the text/emoji variation selectors. */
const NAME_ALLOWED_IGNORABLE = /[\u200c\u200d\ufe0e\ufe0f]/gu;
/** Anything that renders as a space: separators and every whitespace character. */
const SPACE = /[\p{Z}\s]/u;
/** Other invisible formatting characters (Unicode Cf), e.g. the Arabic letter mark. */
const FORMAT = /\p{Cf}/u;

export const TEXT_MESSAGES = {
  malformed: "must be well-formed Unicode (no lone surrogate halves)",
  control: "must not contain control characters",
  bidi: "must not contain bidi overrides, embeddings or isolates",
  lineBreak: "must not contain line or paragraph separators (U+2028, U+2029)",
  blank:
    "must not contain characters that render blank (fillers, blank braille, invisible operators, zero-width spaces)",
  symbolSpace: "must not contain spaces or characters that render as a space or as nothing",
  format: "must not contain invisible formatting characters",
  empty: "must not be empty",
} as const;

/** The first rule `s` breaks as a `kind` field, or null. */
export function textProblem(s: string, kind: TextKind): string | null {
  if (!s.isWellFormed()) return TEXT_MESSAGES.malformed;
  if ((kind === "multiline" ? CONTROL_BUT_NEWLINES : CONTROL).test(s)) {
    return TEXT_MESSAGES.control;
  }
  if (BIDI_CONTROL.test(s)) return TEXT_MESSAGES.bidi;
  if (kind !== "multiline" && LINE_SEPARATORS.test(s)) return TEXT_MESSAGES.lineBreak;
  if (kind === "symbol") {
    if (SPACE.test(s) || BLANK.test(s.replace(/[\ufe0e\ufe0f]/gu, "")) || FORMAT.test(s)) {
      return TEXT_MESSAGES.symbolSpace;
    }
  } else if (kind === "name") {
    const checked = s.replace(NAME_ALLOWED_IGNORABLE, "");
    if (BLANK.test(checked)) return TEXT_MESSAGES.blank;
    if (FORMAT.test(checked)) return TEXT_MESSAGES.format;
  }
  return null;
}

/** Whether `s` shows nothing a reader can see: empty, spaces, or only blank-rendering characters. */
export function rendersBlank(s: string): boolean {
  return s.replace(/[\p{Z}\s\p{Default_Ignorable_Code_Point}\u2800\p{Cc}\p{Cf}]/gu, "") === "";
}
