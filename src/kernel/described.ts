/**
 * Zod field builders for what a response documents: a base58 address, a decimal-digit amount.
 * Shared by the response schemas the routes shape their bodies through (src/listing/) and those
 * only the OpenAPI document reads (src/openapi/schemas.ts), so both describe a field alike.
 */
import { z } from "zod";

export const base58 = (what: string) =>
  z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/).describe(`${what} (base58)`);

export const digits = (what: string) =>
  z.string().regex(/^[0-9]+$/).describe(`${what}, a string of decimal digits`);
