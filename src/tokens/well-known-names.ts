/**
 * Refusing names and symbols of well-known projects. A plain case-insensitive comparison is
 * beaten by anything a wallet renders the same way ("UЅDС" with Cyrillic letters, fullwidth
 * "ＵＳＤＣ", "US\u200bDC", "S0L"), so both sides are folded to a skeleton first and the
 * skeletons are compared whole. Whole-string comparison keeps false positives rare: "Solana Cat"
 * stays allowed, "$SOL" and "S.O.L" do not.
 */

/**
 * Look-alikes the Unicode NFKC form leaves alone, mapped to the Latin letter they impersonate
 * (a hand-picked subset of Unicode's confusables.txt covering Cyrillic, Greek and a few others).
 * Capitals are folded before lower-casing because a capital can look like a different letter
 * than its own small form does: Greek "Η" reads as H, "η" as n.
 */
const UPPER_CONFUSABLES = table(
  ["АВЕЗКМНОРСТУХЅІЈԚԜҮҺӀЬ", "abe3kmhopctyxsijqwyhib"], // Cyrillic
  ["ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ", "abezhikmnoptyxc"], // Greek
);

const LOWER_CONFUSABLES = table(
  ["авгеёзкмнопрстухчшщъьѕіїјԁԛԝһӏөүҫԍ", "abree3kmhonpctyx4wwbbsiijdqwhloycg"], // Cyrillic
  ["αβγεζηθικμνοπρςστυχωϲϳ", "abyeznoikuvonpcotuxwcj"], // Greek
  ["ıȷɑɡɩɪʟɴʀʏᴀʙᴄᴅᴇɢʜᴊᴋᴍᴏᴘꜱᴛᴜᴠᴡᴢøðđħłŧ", "ijagiilnryabcdeghjkmopstuvwzoddhlt"], // Latin look-alikes
  ["$@€£¢|!", "saelcli"], // symbols used as letters
);

function table(...rows: [string, string][]): Map<string, string> {
  const m = new Map<string, string>();
  for (const [from, to] of rows) {
    const f = Array.from(from);
    const t = Array.from(to);
    if (f.length !== t.length) throw new Error(`confusable row ${from} is misaligned`);
    f.forEach((ch, i) => m.set(ch, t[i]));
  }
  return m;
}

/** Digits and letters that differ only by a stroke in most fonts collapse to one class. */
const DIGIT_FOLDS = table(["01345789l", "oieastbgi"]);

/** Letter pairs that render like one letter at wallet font sizes. */
const SEQUENCE_FOLDS: [RegExp, string][] = [[/rn/g, "m"], [/vv/g, "w"], [/cl/g, "d"]];

/** Characters that draw nothing: zero-width spaces and joiners, BOM, fillers, bidi controls. */
const INVISIBLE = /[\p{Cf}\p{Cc}\u115F\u1160\u3164\uFFA0\u034F\u17B4\u17B5\u180B-\u180F]/gu;

/**
 * The skeleton of a name: what is left once everything a reader can't tell apart is removed.
 * Two names with the same skeleton are treated as the same name.
 */
export function skeleton(input: string): string {
  let s = input.normalize("NFKC").replace(INVISIBLE, "");
  // Accents go: "Sōlana" is read as "Solana". NFD splits them off as combining marks.
  s = s.normalize("NFD").replace(/\p{M}/gu, "").normalize("NFC");
  // A symbol used as a ticker prefix ("$BONK") is decoration, not a letter.
  s = s.replace(/^[$#]+(?=\p{L})/u, "");
  s = Array.from(s, (ch) => UPPER_CONFUSABLES.get(ch) ?? ch).join("").toLowerCase();
  s = Array.from(s, (ch) => LOWER_CONFUSABLES.get(ch) ?? ch).join("");
  s = Array.from(s, (ch) => DIGIT_FOLDS.get(ch) ?? ch).join("");
  // Separators and punctuation carry no identity: "U.S.D.C", "Wrapped-SOL", "B O N K".
  s = s.replace(/[^\p{L}\p{N}]/gu, "");
  for (const [re, to] of SEQUENCE_FOLDS) s = s.replace(re, to);
  return s;
}

export interface WellKnownMatcher {
  /** The list entry `value` impersonates, or null. */
  match(value: string): string | null;
}

export function wellKnownMatcher(names: readonly string[]): WellKnownMatcher {
  const bySkeleton = new Map<string, string>();
  for (const n of names) {
    const k = skeleton(n);
    if (k && !bySkeleton.has(k)) bySkeleton.set(k, n);
  }
  return {
    match(value) {
      const k = skeleton(value);
      return k ? bySkeleton.get(k) ?? null : null;
    },
  };
}
