/**
 * What a build writes on chain for a token's text, in bytes of UTF-8: the Metaplex metadata
 * account's bounds, which every build keeps to under either token program. A hosted document's
 * name and symbol are held to them too, since a build on it must repeat them.
 */
export const MAX_NAME_BYTES = 32;
export const MAX_SYMBOL_BYTES = 10;
export const MAX_URI_BYTES = 200;
