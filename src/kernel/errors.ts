/**
 * The seed's error body: `{error:{code,message,fields}}`, one class for every failure we answer.
 * The kernel's: commands, reads and HTTP all raise these, so none of them imports the HTTP layer.
 */
/** Every error code, once: the OpenAPI enum reads this list, ApiError the status beside it. */
export const ERROR_CODES = [
  "invalid_request",
  "insufficient_funds",
  "simulation_failed",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "payload_too_large",
  "idempotency_key_in_flight",
  "idempotency_key_reused",
  "rate_limited",
  "daily_limit",
  "price_unavailable",
  "rpc_busy",
  "server_error",
  "not_ready",
  "vanity_timeout",
] as const;

export type ErrorCode = typeof ERROR_CODES[number];

/** The HTTP status each code answers with. */
const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  insufficient_funds: 400,
  simulation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  idempotency_key_in_flight: 409,
  idempotency_key_reused: 422,
  vanity_timeout: 422,
  rate_limited: 429,
  daily_limit: 429,
  server_error: 500,
  price_unavailable: 503,
  rpc_busy: 503,
  not_ready: 503,
};

/**
 * A parse that finds more bad fields than an answer lists (a body of 160,000 unknown members)
 * names the first and counts the rest here, so the rest are never built into a map.
 */
export const FIELDS_OMITTED: unique symbol = Symbol("fieldsOmitted");

export type ErrorFields = Record<string, unknown> & { [FIELDS_OMITTED]?: number };

/**
 * Bounds on what an error answer lists, so its size does not grow with the request: a body of
 * 3,200 unknown members (or one member with a 60 KB name) gets an answer of a few KB. The first
 * `MAX_LISTED_FIELDS` fields are named; `fieldsOmitted` counts the rest.
 */
export const MAX_LISTED_FIELDS = 20;
export const MAX_FIELD_NAME_CHARS = 100;
export const MAX_FIELD_MESSAGE_CHARS = 300;

export class ApiError extends Error {
  readonly status: number;
  readonly fields: ErrorFields;
  /** Fields found bad but not listed in `fields` (beyond `MAX_LISTED_FIELDS`). */
  readonly fieldsOmitted: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    fields: ErrorFields = {},
    readonly headers: Record<string, string> = {},
  ) {
    const bounded = boundFields(fields);
    super(
      bounded.omitted > 0
        ? `${message}; ${bounded.omitted} more fields are invalid and not listed`
        : message,
    );
    this.status = STATUS[code];
    this.fields = bounded.fields;
    this.fieldsOmitted = bounded.omitted;
  }
  body(): ErrorBody {
    const error: ErrorBody["error"] = {
      code: this.code,
      message: this.message,
      fields: this.fields,
    };
    if (this.fieldsOmitted > 0) error.fieldsOmitted = this.fieldsOmitted;
    return { error };
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; fields: ErrorFields; fieldsOmitted?: number };
}

const clip = (s: string, max: number) => {
  const cps = Array.from(s);
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join("")}\u2026`;
};

/** The first fields, their names and messages clipped; the count of those left out. */
export function boundFields(fields: ErrorFields): { fields: ErrorFields; omitted: number } {
  const out: ErrorFields = {};
  let listed = 0;
  let omitted = fields[FIELDS_OMITTED] ?? 0;
  for (const [name, value] of Object.entries(fields)) {
    if (listed >= MAX_LISTED_FIELDS) {
      omitted++;
      continue;
    }
    const key = clip(name, MAX_FIELD_NAME_CHARS);
    if (key in out) {
      // Two long names clipped to the same prefix: one entry stands for both.
      omitted++;
      continue;
    }
    out[key] = typeof value === "string" ? clip(value, MAX_FIELD_MESSAGE_CHARS) : value;
    listed++;
  }
  return { fields: out, omitted };
}

export const invalid = (fields: Record<string, string>, message = "Request is invalid") =>
  new ApiError("invalid_request", message, fields);

export const statusOf = (code: ErrorCode) => STATUS[code];
