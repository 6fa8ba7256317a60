/**
 * Zod field builders for what a response documents: a base58 address, a decimal-digit amount.
 * Shared by the response schemas the routes shape their bodies through (src/listing/) and those
 * only the OpenAPI document reads (src/openapi/schemas.ts), so both describe a field alike.
 */
import { z } from "zod";

/** A Solana address's spelling as JSON Schema can say it (the decode to 32 bytes it cannot). */
export const BASE58_ADDRESS_PATTERN = "^[1-9A-HJ-NP-Za-km-z]{32,44}$";

export const base58 = (what: string) =>
  z.string().regex(new RegExp(BASE58_ADDRESS_PATTERN)).describe(`${what} (base58)`);

export const digits = (what: string) =>
  z.string().regex(/^[0-9]+$/).describe(`${what}, a string of decimal digits`);
