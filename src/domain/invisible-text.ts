/**
 * Invisible formatting characters (Unicode Cf) in a token's name or symbol: a right-to-left
 * override makes "\u202ECDSU" read as USDC in a wallet, while a look-alike check that drops such
 * characters sees "CDSU"; zero-width spaces hide text the same way. The zero-width joiner and
 * non-joiner stay allowed: emoji sequences and several scripts need them.
 */
export const INVISIBLE_FORMAT = /(?![\u200c\u200d])\p{Cf}/u;

export const INVISIBLE_FORMAT_MESSAGE =
  "must not contain invisible formatting characters (direction overrides, zero-width spaces)";
