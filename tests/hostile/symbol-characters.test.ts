/**
 * The characters a token symbol may hold (src/domain/symbol-characters.ts, generated from the
 * Unicode 17 data by src/cli/symbol-characters.ts), and the symbol rule built on them in
 * src/domain/text-rules.ts.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { outsideLock } from "../support/outside-lock.ts";
import { SYMBOL_CHARACTER, SYMBOL_CHARACTER_COUNT } from "../../src/domain/symbol-characters.ts";
import { symbolCharacterMessage, TEXT_MESSAGES, textProblem } from "../../src/domain/text-rules.ts";

Deno.test("the committed symbol set is what the generator derives from the Unicode data", async () => {
  const committed = await Deno.readTextFile(
    new URL("../../src/domain/symbol-characters.ts", import.meta.url),
  );
  const derived = await outsideLock(["--allow-read", "src/cli/symbol-characters.ts", "--stdout"]);
  assertEquals(committed, derived, "run `deno task unicode:generate`");
});

Deno.test("no character of the set renders blank, as a space, or changes under NFKC", () => {
  let count = 0;
  const invisible = /[\p{Default_Ignorable_Code_Point}\p{Z}\s\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{M}]/u;
  const bad: string[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (!SYMBOL_CHARACTER.test(ch)) continue;
    count++;
    // Marks of a script's own (Thai, Devanagari vowel signs) are letters' parts; Inherited marks
    // (U+0300...) are not in the set: they pass only composed into their letter.
    const ownMark = /\p{M}/u.test(ch) && !/\p{Script=Inherited}/u.test(ch);
    if ((invisible.test(ch) && !ownMark) || ch.normalize("NFKC") !== ch) bad.push(ch);
  }
  assertEquals(count, SYMBOL_CHARACTER_COUNT);
  assertEquals(bad.map((ch) => ch.codePointAt(0)!.toString(16)), []);
});

Deno.test("symbols: identifier letters, currency signs and emoji pass; what renders as nothing or passes for another does not", () => {
  for (
    const ok of [
      "USDC",
      "$WIF",
      "RAY-WUSDT",
      "pSOL/USDC",
      "SHITZ+",
      "wID_v1",
      "fair3d.me",
      "€TH",
      "₿TC",
      "¥EN",
      "\u00c7A\u2615",
      "C\u0327A", // decomposed Ç: the mark composes into its letter
      "月光",
      "РАКЕТА",
      "Κρόνος",
      "ビット",
      "달토큰",
      "ไทย",
      "हिंदी",
      "عربي",
      "\u2764\uFE0F",
      "🚀🚀",
      "🇺🇸",
      "1\uFE0F\u20E3",
      "👨‍👩‍👧",
      "👍🏽",
    ]
  ) {
    assertEquals(textProblem(ok, "symbol"), null, ok);
  }
  const refused: [string, string][] = [
    ["A\u{1D159}B", TEXT_MESSAGES.symbolSpace], // musical null notehead: renders as nothing
    ["S\u0336OL", symbolCharacterMessage("\u0336")], // a stroke that composes into nothing
    ["ＵＳＤＣ", symbolCharacterMessage("Ｕ")], // fullwidth
    ["𝐒OL", symbolCharacterMessage("𝐒")], // mathematical bold
    ["ᴜsᴅᴄ", symbolCharacterMessage("ᴜ")], // small capitals
    ["ʙᴏɴᴋ", symbolCharacterMessage("ʙ")], // small capitals the look-alike matcher misses
    ["ꜱᴏʟᴀɴᴀ", symbolCharacterMessage("ꜱ")],
    ["ɑBC", symbolCharacterMessage("ɑ")], // IPA alpha
    ["SOǀ", symbolCharacterMessage("ǀ")], // click letter, passes for l
    ["WOW\u01C3", symbolCharacterMessage("\u01C3")], // click letter, passes for !
    ["USDC!", symbolCharacterMessage("!")],
    ["A|B", symbolCharacterMessage("|")],
    ["[x]", symbolCharacterMessage("[")],
    ["A\u{1D165}B", symbolCharacterMessage("\u{1D165}")], // musical combining stem
    ["ꓢꓳꓡ", symbolCharacterMessage("ꓢ")], // Lisu: not a Recommended script
    ["\u2764", symbolCharacterMessage("\u2764")], // a heart without its emoji selector
    ["A\uFE0F", TEXT_MESSAGES.symbolSpace], // a selector outside an emoji
    ["A\u200DB", TEXT_MESSAGES.symbolSpace], // a joiner outside an emoji
    ["\u{1F1FA}X", symbolCharacterMessage("\u{1F1FA}")], // half a flag
    ["﹩WIF", symbolCharacterMessage("﹩")], // small dollar, NFKC "$"
  ];
  for (const [s, message] of refused) assertEquals(textProblem(s, "symbol"), message, s);
  assert(symbolCharacterMessage("ǀ").includes("(U+01C0)"));
});
