/** The seed's error body: `{error:{code,message,fields}}`, one class for every failure we answer. */
export type ErrorCode =
  | "invalid_request"
  | "insufficient_funds"
  | "simulation_failed"
  | "unauthorized"
  | "not_found"
  | "payload_too_large"
  | "rate_limited"
  | "daily_limit"
  | "idempotency_key_reused"
  | "idempotency_key_in_flight"
  | "price_unavailable"
  | "server_error"
  | "forbidden"
  | "vanity_timeout";

const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  insufficient_funds: 400,
  simulation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  payload_too_large: 413,
  idempotency_key_in_flight: 409,
  idempotency_key_reused: 422,
  vanity_timeout: 422,
  rate_limited: 429,
  daily_limit: 429,
  server_error: 500,
  price_unavailable: 503,
};

export type ErrorFields = Record<string, unknown>;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fields: ErrorFields = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS[code];
  }
  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, fields: this.fields } };
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; fields: ErrorFields };
}

export const invalid = (fields: Record<string, string>, message = "Request is invalid") =>
  new ApiError("invalid_request", message, fields);

export const statusOf = (code: ErrorCode) => STATUS[code];
