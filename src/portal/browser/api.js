// @ts-check
/// <reference lib="dom" />
// Same-origin JSON calls to the portal API and /v1/pricing, with the service's error shape
// ({error:{code,message,fields}}) turned into one exception type the page can explain.

export class ApiFailure extends Error {
  /**
   * @param {number} status 0 when the service could not be reached at all
   * @param {string} code
   * @param {string} message
   * @param {Record<string, unknown>} fields
   * @param {number | null} retryAfter seconds, when the service said
   */
  constructor(status, code, message, fields = {}, retryAfter = null) {
    super(message);
    this.name = "ApiFailure";
    this.status = status;
    this.code = code;
    this.fields = fields;
    this.retryAfter = retryAfter;
  }
}

/**
 * @param {string} path
 * @param {{method?: string, json?: unknown}} [init]
 */
export async function api(path, init = {}) {
  const method = init.method ?? (init.json === undefined ? "GET" : "POST");
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json" };
  if (init.json !== undefined) headers["content-type"] = "application/json";
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      credentials: "same-origin",
      cache: "no-store",
    });
  } catch {
    throw new ApiFailure(
      0,
      "network",
      "The service can't be reached. Check your connection and retry.",
    );
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    // A proxy's HTML error page, say: handled below by the status alone.
  }
  if (!res.ok) {
    const err = body?.error;
    const retry = Number(res.headers.get("retry-after"));
    throw new ApiFailure(
      res.status,
      typeof err?.code === "string"
        ? err.code
        : res.status >= 500
        ? "server_error"
        : "invalid_request",
      typeof err?.message === "string" ? err.message : `The service answered ${res.status}.`,
      err?.fields && typeof err.fields === "object" ? err.fields : {},
      Number.isFinite(retry) && retry > 0 ? retry : null,
    );
  }
  return body;
}
