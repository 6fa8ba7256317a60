import type { ErrorCode, ErrorFields } from "./errors.ts";
import { ApiError } from "./errors.ts";

/** A decision that produced no events: the reason, in the API's own error vocabulary. */
export interface Rejection {
  rejected: ErrorCode;
  message: string;
  fields?: ErrorFields;
}

export const reject = (rejected: ErrorCode, message: string, fields?: ErrorFields): Rejection => ({
  rejected,
  message,
  fields,
});

export const isRejection = (x: unknown): x is Rejection =>
  typeof x === "object" && x !== null && "rejected" in x;

export const toApiError = (r: Rejection) => new ApiError(r.rejected, r.message, r.fields ?? {});
