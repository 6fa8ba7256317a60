/**
 * JSON-RPC 2.0 envelope handling with the node's (jsonrpc-core) error codes and messages:
 * parse errors, invalid requests, batches and notifications. Responses may carry bigints,
 * which are written as plain JSON numbers (u64 values such as rentEpoch exceed 2^53).
 */

export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export type Id = number | string | null;
export type MethodHandler = (method: string, params: unknown[]) => unknown;

const BIG_MARK = "\u0000big:";

/** JSON with bigints emitted as bare numbers. */
export function stringify(value: unknown): string {
  const s = JSON.stringify(value, (_k, v) => typeof v === "bigint" ? BIG_MARK + v.toString() : v);
  return s.includes("\\u0000big:") ? s.replace(/"\\u0000big:(\d+)"/g, "$1") : s;
}

function errorObject(id: Id, e: RpcError): Record<string, unknown> {
  const error: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.data !== undefined) error.data = e.data;
  return { jsonrpc: "2.0", error, id };
}

function isValidId(id: unknown): id is Id {
  return id === null || typeof id === "number" || typeof id === "string";
}

function handleOne(req: unknown, call: MethodHandler): Record<string, unknown> | null {
  if (typeof req !== "object" || req === null || Array.isArray(req)) {
    return errorObject(null, new RpcError(INVALID_REQUEST, "Invalid request"));
  }
  const r = req as Record<string, unknown>;
  const hasId = "id" in r;
  if (
    r.jsonrpc !== "2.0" || typeof r.method !== "string" || (hasId && !isValidId(r.id)) ||
    (r.params !== undefined && r.params !== null && typeof r.params !== "object")
  ) {
    return errorObject(null, new RpcError(INVALID_REQUEST, "Invalid request"));
  }
  const id = hasId ? r.id as Id : null;
  let params: unknown[];
  if (r.params === undefined || r.params === null) params = [];
  else if (Array.isArray(r.params)) params = r.params;
  else {
    const e = new RpcError(INVALID_PARAMS, "Invalid params: invalid type: map, expected a tuple.");
    return hasId ? errorObject(id, e) : null;
  }
  try {
    const result = call(r.method, params);
    return hasId ? { jsonrpc: "2.0", result, id } : null;
  } catch (e) {
    if (!hasId) return null;
    if (e instanceof RpcError) return errorObject(id, e);
    // As the node answers (jsonrpc-core's internal_error): no exception text goes out.
    return errorObject(id, new RpcError(INTERNAL_ERROR, "Internal error"));
  }
}

/** Body in, body out; null when nothing is to be sent back (notifications only). */
export function handleJsonRpc(body: string, call: MethodHandler): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return stringify(errorObject(null, new RpcError(PARSE_ERROR, "Parse error")));
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) {
      return stringify(errorObject(null, new RpcError(INVALID_REQUEST, "Invalid request")));
    }
    const out = parsed.map((r) => handleOne(r, call)).filter((r) => r !== null);
    return out.length ? stringify(out) : null;
  }
  const out = handleOne(parsed, call);
  return out ? stringify(out) : null;
}

/** The id of a request body, best effort, for answers produced without running it. */
export function requestIds(body: string): Id | Id[] {
  try {
    const p = JSON.parse(body);
    if (Array.isArray(p)) return p.map((r) => (isValidId(r?.id) ? r.id : null));
    return isValidId(p?.id) ? p.id : null;
  } catch {
    return null;
  }
}

export function errorBody(ids: Id | Id[], e: RpcError): string {
  if (Array.isArray(ids)) return stringify(ids.map((id) => errorObject(id, e)));
  return stringify(errorObject(ids, e));
}
