/** Path and query parameters the token routes share, each refused with the field named. */
import { isAddress, isSignature } from "../kernel/base58.ts";
import { ApiError } from "../kernel/errors.ts";

function param(v: string, ok: (v: string) => boolean, field: string, message: string): string {
  if (!ok(v)) throw new ApiError("invalid_request", "Request is invalid", { [field]: message });
  return v;
}

export const mintParam = (mint: string): string =>
  param(mint, isAddress, "mint", "must be a base58 Solana address (32 bytes)");

const UPDATE_ID = /^[0-9a-f]{32}$/;
export const updateIdParam = (id: string): string =>
  param(id, (v) => UPDATE_ID.test(v), "updateId", "must be 32 lower-case hex characters");

export const signatureParam = (sig: string): string =>
  param(sig, isSignature, "signature", "must be a base58 transaction signature");
