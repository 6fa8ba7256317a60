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
 * - Every field: at most MAX_MARKS_PER_LETTER combining marks stacked on one character, so that
 *   "a" and 31 marks cannot paint over the text around it (Zalgo text).
 * - Symbols: only the characters of SYMBOL_CHARACTER (UTS #39's identifier profile, currency
 *   signs and a few ASCII marks; see src/cli/symbol-characters.ts, which derives it) and whole
 *   RGI emoji. The check runs on the NFC form, so a mark passes only composed into its letter.
 */
import { SYMBOL_CHARACTER } from "./symbol-characters.ts";

export type TextKind = "name" | "symbol" | "line" | "multiline";

const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_NEWLINES = /[^\P{Cc}\n\r\t]/u;
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/u;
const LINE_SEPARATORS = /[\u2028\u2029]/u;

/**
 * Drawn as nothing or as an empty cell: default-ignorable code points (zero-width spaces, fillers,
 * invisible operators, tags, variation selectors) plus the blank braille pattern, the Hangul
 * fillers and the musical null notehead, which fonts draw as an empty box of a letter's width.
 */
const BLANK = /[\p{Default_Ignorable_Code_Point}\u2800\u115f\u1160\u3164\uffa0\u{1d159}]/u;
/** What a name may keep of the above: the joiners and the text/emoji variation selectors. */
const NAME_ALLOWED_IGNORABLE = /[\u200c\u200d\ufe0e\ufe0f]/gu;
/** Anything that renders as a space: separators and every whitespace character. */
const SPACE = /[\p{Z}\s]/u;
/** Other invisible formatting characters (Unicode Cf), e.g. the Arabic letter mark. */
const FORMAT = /\p{Cf}/u;

/** Vietnamese stacks 2 marks on a letter, pointed Hebrew and Tibetan 3; Zalgo text dozens. */
export const MAX_MARKS_PER_LETTER = 3;
const STACKED_MARKS = new RegExp(`[\\p{Mn}\\p{Me}]{${MAX_MARKS_PER_LETTER + 1}}`, "u");
const RGI_EMOJI = /\p{RGI_Emoji}/gv;

export const TEXT_MESSAGES = {
  malformed: "must be well-formed Unicode (no lone surrogate halves)",
  control: "must not contain control characters",
  bidi: "must not contain bidi overrides, embeddings or isolates",
  lineBreak: "must not contain line or paragraph separators (U+2028, U+2029)",
  blank:
    "must not contain characters that render blank (fillers, blank braille, invisible operators, zero-width spaces)",
  symbolSpace: "must not contain spaces or characters that render as a space or as nothing",
  format: "must not contain invisible formatting characters",
  marks: `must not stack more than ${MAX_MARKS_PER_LETTER} combining marks on one character`,
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
  if (STACKED_MARKS.test(s.normalize("NFD"))) return TEXT_MESSAGES.marks;
  if (kind === "symbol") {
    // Whole emoji keep their joiners and selectors; anywhere else those draw nothing.
    const rest = s.normalize("NFC").replace(RGI_EMOJI, "");
    if (SPACE.test(rest) || BLANK.test(rest) || FORMAT.test(rest)) {
      return TEXT_MESSAGES.symbolSpace;
    }
    return symbolCharacterProblem(rest);
  } else if (kind === "name") {
    const checked = s.replace(NAME_ALLOWED_IGNORABLE, "");
    if (BLANK.test(checked)) return TEXT_MESSAGES.blank;
    if (FORMAT.test(checked)) return TEXT_MESSAGES.format;
  }
  return null;
}

const SYMBOL_CHARACTER_RULE =
  "a symbol takes letters and digits of UTS #39's identifier profile, ' - . : / + _, currency " +
  "signs and emoji";

/** The message for a character a symbol may not hold, naming it. */
export const symbolCharacterMessage = (ch: string) =>
  `must not contain ${JSON.stringify(ch)} (U+${
    ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")
  }): ${SYMBOL_CHARACTER_RULE}`;

/**
 * Whether a field's message is the symbol-character one. A look-alike of a listed name is named as
 * such even when its letters are also outside the symbol set ("ꓢꓳꓡ"): impersonation is the
 * reason the reader needs.
 */
export const isSymbolCharacterMessage = (message: string | undefined) =>
  message?.endsWith(SYMBOL_CHARACTER_RULE) ?? false;

/** `rest`: the symbol in NFC, its emoji taken out. */
function symbolCharacterProblem(rest: string): string | null {
  for (const ch of rest) {
    if (!SYMBOL_CHARACTER.test(ch)) return symbolCharacterMessage(ch);
  }
  return null;
}

/** Whether `s` shows nothing a reader can see: empty, spaces, or only blank-rendering characters. */
export function rendersBlank(s: string): boolean {
  return s.replace(/[\p{Z}\s\p{Default_Ignorable_Code_Point}\u2800\p{Cc}\p{Cf}]/gu, "") === "";
}
