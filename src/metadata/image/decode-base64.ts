/**
 * Decodes an uploaded image given as base64, optionally wrapped in a
 * `data:<mime>;base64,` URL.
 *
 * The declared MIME type is ignored on purpose: a client can claim anything,
 * so the decoded bytes are sniffed instead. Size is checked on the encoded
 * text before any decoding so an oversized request costs almost nothing.
 */

import { inspectImage, MAX_IMAGE_BYTES, type SniffedImage } from "./sniff.ts";

export type DecodeBase64Result =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: string };

export type DecodeBase64ImageResult =
  | { ok: true; bytes: Uint8Array; image: SniffedImage }
  | { ok: false; reason: string };

export interface DecodeBase64Options {
  /** Largest decoded size accepted, in bytes. Defaults to 1 MiB. */
  maxBytes?: number;
}

/** Generous room for `data:` + MIME type + parameters + `;base64,`. */
const MAX_DATA_URL_PREFIX = 256;

/** The padding character is checked for position separately. */
const BASE64_ALPHABET = /^[A-Za-z0-9+/=]*$/;
const DATA_URL_META = /^[^\s,]*;base64$/i;
const MISSING_PADDING =
  "image is not valid base64 (padding required: the text must be whole groups of 4, ending in = or ==)";

/** Decodes base64 (or a base64 data: URL) and checks the bytes are a PNG, JPEG or WebP image. */
export function decodeBase64Image(
  input: string,
  options: DecodeBase64Options = {},
): DecodeBase64ImageResult {
  const decoded = decodeBase64(input, options);
  if (!decoded.ok) return decoded;
  const inspected = inspectImage(decoded.bytes);
  if (!inspected.ok) return inspected;
  return { ok: true, bytes: decoded.bytes, image: inspected.image };
}

/**
 * Strict standard-alphabet base64 decoding with a size cap, as RFC 4648
 * section 4 writes it: padding is required (the text is whole groups of
 * four), and whitespace, URL-safe characters and non-canonical trailing bits
 * are refused, so that each image has exactly one accepted encoding.
 */
export function decodeBase64(input: string, options: DecodeBase64Options = {}): DecodeBase64Result {
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  if (typeof input !== "string") return { ok: false, reason: "image must be a base64 string" };
  const tooLarge = { ok: false, reason: `image larger than ${maxBytes} bytes` } as const;

  const maxEncoded = 4 * Math.ceil(maxBytes / 3);
  if (input.length > maxEncoded + MAX_DATA_URL_PREFIX) return tooLarge;

  let payload = input;
  if (input.slice(0, 5).toLowerCase() === "data:") {
    const comma = input.slice(0, MAX_DATA_URL_PREFIX).indexOf(",");
    if (comma < 0 || !DATA_URL_META.test(input.slice(5, comma))) {
      return { ok: false, reason: "data URL must be of the form data:<type>;base64,<data>" };
    }
    payload = input.slice(comma + 1);
  }
  if (payload.length > maxEncoded) return tooLarge;

  if (!BASE64_ALPHABET.test(payload)) {
    return {
      ok: false,
      reason: "image is not valid base64 (only A-Z, a-z, 0-9, + and / are allowed)",
    };
  }

  let padding = 0;
  while (padding < payload.length && payload[payload.length - 1 - padding] === "=") padding++;
  const digits = payload.length - padding;
  // A last group of 2 or 3 digits takes "==" or "="; a whole last group takes none.
  const expected = (4 - (digits % 4)) % 4;
  if (padding > 2 || digits % 4 === 1 || (padding > 0 && padding !== expected)) {
    return { ok: false, reason: "image is not valid base64 (bad length or padding)" };
  }
  if (digits === 0) return { ok: false, reason: "image is empty" };
  if (Math.floor((digits * 3) / 4) > maxBytes) return tooLarge;
  if (padding !== expected) return { ok: false, reason: MISSING_PADDING };

  const body = payload.slice(0, digits);
  if (body.includes("=")) {
    return { ok: false, reason: "image is not valid base64 (bad length or padding)" };
  }
  if (!hasCanonicalTail(body)) {
    return { ok: false, reason: "image is not valid base64 (non-zero trailing bits)" };
  }

  const binary = atob(body);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return { ok: true, bytes };
}

/**
 * A final group of 2 or 3 digits carries 4 or 2 bits beyond the last whole
 * byte; encoders always zero them, and accepting others would let the same
 * bytes arrive under many spellings.
 */
function hasCanonicalTail(body: string): boolean {
  const rest = body.length % 4;
  if (rest === 0) return true;
  const last = digitValue(body.charCodeAt(body.length - 1));
  return rest === 2 ? (last & 0x0f) === 0 : (last & 0x03) === 0;
}

function digitValue(code: number): number {
  if (code >= 65 && code <= 90) return code - 65; // A-Z
  if (code >= 97 && code <= 122) return code - 71; // a-z
  if (code >= 48 && code <= 57) return code + 4; // 0-9
  return code === 43 ? 62 : 63; // + or /
}
