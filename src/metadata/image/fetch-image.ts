/**
 * Fetches a client-supplied image URL on the server, defensively: the policy.
 *
 * This is the service's main server-side request forgery surface, so it does
 * not use `fetch()`: fetch resolves the host name itself, which would let a
 * DNS rebinding attack answer our policy check with a public address and the
 * connection with a private one. Instead every hop is resolved once here,
 * every resolved address is checked, redirects are followed (or not) by us,
 * and the request goes out through pinned-transport.ts, which has `node:https`
 * / `node:http` do the HTTP and TLS while connecting only to the checked
 * address. This file keeps what no HTTP library decides for us: which
 * addresses are allowed, the redirect rules, the size and time budgets, the
 * content rules, and the test knobs (resolver, dial gate, timer). Every
 * failure becomes `{ ok: false, reason }` with a reason short enough to show
 * to the API client.
 */

import { classifyAddress, isLoopbackAddress } from "./address-policy.ts";
import { type ParsedIp, parseIp } from "../../kernel/ipaddr.ts";
import { inspectImage, MAX_IMAGE_BYTES, type SniffedImage } from "./sniff.ts";
import { exchange, type PinnedResponse, TransportError } from "./pinned-transport.ts";

export interface FetchImageOptions {
  /** Budget for the whole fetch, redirects included: DNS, connect, TLS, headers, body. */
  timeoutMs?: number;
  /** Largest body accepted, in bytes. */
  maxBytes?: number;
  /** How many redirects are followed before giving up. */
  maxRedirects?: number;
  /** Host name to IP addresses. Defaults to DNS A and AAAA lookups. */
  resolve?: (hostname: string, signal?: AbortSignal) => Promise<string[]>;
  /**
   * Test-only: allows plain http and loopback addresses so tests can run
   * against local servers. Production configuration must never set it.
   */
  allowLoopbackHttpForTests?: boolean;
  signal?: AbortSignal;
  /** Test-only: extra PEM trust anchors, for TLS tests against a local CA. */
  caCerts?: string[];
  /**
   * Test-only: called with each checked address just before it is dialled, e.g. to record or
   * forbid connection attempts; throwing refuses that attempt.
   */
  dial?: (to: { hostname: string; port: number }) => void;
  /**
   * Test-only: replaces the `setTimeout` behind `timeoutMs`, so a test decides when the budget
   * runs out instead of racing the wall clock. Returns a function that cancels the timer.
   */
  startTimer?: StartTimer;
}

export type StartTimer = (ms: number, onTimeout: () => void) => () => void;

const startWallClockTimer: StartTimer = (ms, onTimeout) => {
  const id = setTimeout(onTimeout, ms);
  return () => clearTimeout(id);
};

/** What a resource fetch is for: its Accept header and the word its refusals use. */
export interface ResourceKind {
  accept: string;
  /** "image", "document": as in "document larger than 65536 bytes". */
  what: string;
  /** Sent as the Origin header, so a server that answers CORS only to browsers shows it. */
  origin?: string;
}

export type FetchResourceResult =
  | { ok: true; bytes: Uint8Array; finalUrl: string; headers: Map<string, string[]> }
  | { ok: false; reason: string; detail?: string };

export type FetchImageResult =
  | { ok: true; bytes: Uint8Array; finalUrl: string; image: SniffedImage }
  | {
    ok: false;
    /** Safe to show to the client. */
    reason: string;
    /** For server logs only: may name internal addresses or low-level errors. */
    detail?: string;
  };

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_REDIRECTS = 3;

const USER_AGENT = "token-metadata-image-fetcher/1.0";
const MAX_URL_LENGTH = 8192;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Thrown to unwind with a client-facing reason. */
class Refusal extends Error {
  constructor(reason: string, readonly detail?: string) {
    super(reason);
  }
}

class Aborted extends Error {}

interface Settings {
  kind: ResourceKind;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  resolve: (hostname: string, signal?: AbortSignal) => Promise<string[]>;
  testMode: boolean;
  caCerts?: string[];
  dial?: (to: { hostname: string; port: number }) => void;
}

interface Target {
  url: URL;
  /** Host name for DNS, SNI and certificate checks (IPv6 without brackets). */
  host: string;
  /** Set when the URL names an IP address directly, so there is nothing to resolve. */
  literal: ParsedIp | null;
  port: number;
}

const IMAGE: ResourceKind = { accept: "image/png,image/jpeg,image/webp", what: "image" };

/**
 * Fetches `url` and returns the bytes if they are a PNG, JPEG or WebP image.
 * Never throws for anything the URL or the remote side does; only invalid
 * options (a programming error) raise a RangeError.
 */
export async function fetchImage(
  url: string,
  options: FetchImageOptions = {},
): Promise<FetchImageResult> {
  const r = await fetchResource(url, IMAGE, options);
  if (!r.ok) return r;
  const inspected = inspectImage(r.bytes);
  if (!inspected.ok) return { ok: false, reason: inspected.reason };
  return { ok: true, bytes: r.bytes, finalUrl: r.finalUrl, image: inspected.image };
}

/**
 * Fetches `url` through the same policy (addresses, redirects, size and time budgets) and returns
 * the body whatever it is, with the final response's headers: for the display check, which reads
 * a metadata document and judges images itself.
 */
export async function fetchResource(
  url: string,
  kind: ResourceKind,
  options: FetchImageOptions = {},
): Promise<FetchResourceResult> {
  const settings = readSettings(options, kind);
  if (options.signal?.aborted) return { ok: false, reason: "request aborted" };

  const controller = new AbortController();
  let timedOut = false;
  const cancelTimer = (options.startTimer ?? startWallClockTimer)(settings.timeoutMs, () => {
    timedOut = true;
    controller.abort();
  });
  const relayAbort = () => controller.abort();
  options.signal?.addEventListener("abort", relayAbort, { once: true });

  try {
    return await fetchFollowingRedirects(url, settings, controller.signal);
  } catch (error) {
    if (timedOut) {
      return { ok: false, reason: `timed out after ${formatDuration(settings.timeoutMs)}` };
    }
    if (controller.signal.aborted) return { ok: false, reason: "request aborted" };
    if (error instanceof Refusal) {
      return error.detail === undefined
        ? { ok: false, reason: error.message }
        : { ok: false, reason: error.message, detail: error.detail };
    }
    return { ok: false, reason: `could not fetch ${kind.what}`, detail: describe(error) };
  } finally {
    cancelTimer();
    options.signal?.removeEventListener("abort", relayAbort);
  }
}

function readSettings(options: FetchImageOptions, kind: ResourceKind = IMAGE): Settings {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError("timeoutMs must be > 0");
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError("maxBytes must be an integer >= 0");
  }
  if (!Number.isSafeInteger(maxRedirects) || maxRedirects < 0) {
    throw new RangeError("maxRedirects must be an integer >= 0");
  }
  return {
    kind,
    timeoutMs,
    maxBytes,
    maxRedirects,
    resolve: options.resolve ?? resolveWithDns,
    testMode: options.allowLoopbackHttpForTests === true,
    caCerts: options.caCerts,
    dial: options.dial,
  };
}

async function fetchFollowingRedirects(
  url: string,
  settings: Settings,
  signal: AbortSignal,
): Promise<FetchResourceResult> {
  let target = parseTarget(url, settings);
  for (let redirects = 0;; redirects++) {
    const response = await fetchOnce(target, settings, signal);
    if (response.kind === "body") {
      const { bytes, headers } = response;
      return { ok: true, bytes, finalUrl: target.url.href, headers };
    }
    if (redirects >= settings.maxRedirects) throw new Refusal("too many redirects");
    let next: URL;
    try {
      next = new URL(response.location, target.url);
    } catch {
      throw new Refusal("redirect to an invalid URL");
    }
    if (target.url.protocol === "https:" && next.protocol === "http:") {
      throw new Refusal("redirect from https to http refused");
    }
    target = parseTarget(next.href, settings);
  }
}

/**
 * What is wrong with `url` as an image URL before anything is looked up or fetched (not a URL,
 * not https, credentials, no host), or null. Everything `fetchImage` refuses after this point
 * needed the network (or the address policy) to decide.
 */
export function imageUrlProblem(
  url: string,
  options: Pick<FetchImageOptions, "allowLoopbackHttpForTests"> = {},
): string | null {
  try {
    parseTarget(url, { testMode: options.allowLoopbackHttpForTests === true });
    return null;
  } catch (e) {
    if (e instanceof Refusal) return e.message;
    throw e;
  }
}

function parseTarget(text: string, settings: Pick<Settings, "testMode">): Target {
  if (typeof text !== "string" || text.length > MAX_URL_LENGTH) {
    throw new Refusal("URL is missing or too long");
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Refusal("not a valid URL");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && settings.testMode)) {
    throw new Refusal("only https URLs are allowed");
  }
  if (url.username !== "" || url.password !== "") {
    throw new Refusal("URLs with credentials are not allowed");
  }
  // WHATWG URL has already turned numeric tricks (0x7f.1, 2130706433, ...)
  // into a dotted quad here, so parseIp only sees canonical literals.
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (host === "") throw new Refusal("URL has no host");
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { url, host, literal: parseIp(host), port };
}

// ---------------------------------------------------------------------------
// Address checks

function isAllowed(ip: ParsedIp, settings: Settings): { ok: true } | { ok: false; why: string } {
  const verdict = classifyAddress(ip.address);
  if (verdict.public) return { ok: true };
  if (settings.testMode && isLoopbackAddress(ip.address)) return { ok: true };
  return { ok: false, why: verdict.reason };
}

/** Returns the addresses to connect to, every one of them already checked. */
async function resolveTarget(
  target: Target,
  settings: Settings,
  signal: AbortSignal,
): Promise<ParsedIp[]> {
  if (target.literal) {
    const allowed = isAllowed(target.literal, settings);
    if (!allowed.ok) {
      throw new Refusal(`address ${target.literal.address} is not public (${allowed.why})`);
    }
    return [target.literal];
  }
  const host = target.host;
  // RFC 6761 reserves localhost names for loopback; the trailing-dot form is
  // the same name, fully qualified.
  const bare = host.endsWith(".") ? host.slice(0, -1) : host;
  if (!settings.testMode && (bare === "localhost" || bare.endsWith(".localhost"))) {
    throw new Refusal(`host ${host} is not public`);
  }
  let answers: string[];
  try {
    answers = await abortable(settings.resolve(host, signal), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new Refusal(`could not resolve host ${host}`, describe(error));
  }
  if (!Array.isArray(answers) || answers.length === 0) {
    throw new Refusal(`host ${host} has no addresses`);
  }
  const checked = new Map<string, ParsedIp>();
  for (const answer of answers) {
    const ip = typeof answer === "string" ? parseIp(answer) : null;
    if (!ip) throw new Refusal(`could not resolve host ${host}`, `resolver returned ${answer}`);
    const allowed = isAllowed(ip, settings);
    // One bad address refuses the whole host: otherwise an attacker could mix
    // a private answer in and rely on connection fallback to reach it. The
    // address itself is kept out of the client-facing reason so the endpoint
    // cannot be used to map internal DNS.
    if (!allowed.ok) {
      throw new Refusal(
        `host ${host} resolves to a non-public address`,
        `${ip.address}: ${allowed.why}`,
      );
    }
    checked.set(ip.address, ip);
  }
  return [...checked.values()];
}

async function resolveWithDns(hostname: string, signal?: AbortSignal): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([
    Deno.resolveDns(hostname, "A", { signal }),
    Deno.resolveDns(hostname, "AAAA", { signal }),
  ]);
  if (v4.status === "rejected" && v6.status === "rejected") throw v4.reason;
  return [
    ...(v4.status === "fulfilled" ? v4.value : []),
    ...(v6.status === "fulfilled" ? v6.value : []),
  ];
}

// ---------------------------------------------------------------------------
// One request through the pinned transport

type Response =
  | { kind: "redirect"; location: string }
  | { kind: "body"; bytes: Uint8Array; headers: Map<string, string[]> };

async function fetchOnce(
  target: Target,
  settings: Settings,
  signal: AbortSignal,
): Promise<Response> {
  const addresses = await resolveTarget(target, settings, signal);
  const response = await send(target, addresses, settings, signal, {
    method: "GET",
    headers: {
      "User-Agent": USER_AGENT,
      Accept: settings.kind.accept,
      "Accept-Encoding": "identity",
      Connection: "close",
      ...(settings.kind.origin ? { Origin: settings.kind.origin } : {}),
    },
  });
  try {
    const head = response.headers;
    if (REDIRECT_STATUSES.has(response.status)) {
      const location = single(head, "location");
      if (location === undefined) {
        throw new Refusal(`HTTP ${response.status} redirect without a location`);
      }
      return { kind: "redirect", location };
    }
    const what = settings.kind.what;
    if (response.status === 101) throw new Refusal(`${what} server switched protocols`);
    if (response.status < 200 || response.status > 299) {
      throw new Refusal(`${what} server answered HTTP ${response.status}`);
    }
    const encoding = single(head, "content-encoding");
    if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
      throw new Refusal("compressed responses are not supported");
    }
    return { kind: "body", bytes: await readBody(response, settings, signal), headers: head };
  } finally {
    response.close();
  }
}

/** One exchange with the checked addresses, transport failures turned into refusals. */
async function send(
  target: Target,
  addresses: ParsedIp[],
  settings: Settings,
  signal: AbortSignal,
  request: { method: "GET" | "POST"; headers: Record<string, string>; body?: Uint8Array },
): Promise<PinnedResponse> {
  const path = target.url.pathname + target.url.search;
  // WHATWG URL percent-encodes controls and spaces; this keeps it that way
  // should that ever change, since a CR or LF here would inject headers.
  if (!/^[\x21-\x7e]+$/.test(path)) throw new Refusal("URL path cannot be sent");
  for (const [name, value] of Object.entries(request.headers)) {
    if (!TOKEN.test(name) || hasControlCharacter(value)) throw new Refusal(`bad header ${name}`);
  }
  try {
    return await abortable(
      exchange({
        url: target.url,
        host: target.host,
        port: target.port,
        addresses,
        caCerts: settings.caCerts,
        dial: settings.dial,
        signal,
        ...request,
      }),
      signal,
      (late) => late.close(),
    );
  } catch (error) {
    throw transportRefusal(error, target, settings, signal);
  }
}

function transportRefusal(
  error: unknown,
  target: Target,
  settings: Pick<Settings, "maxBytes" | "kind">,
  signal: AbortSignal,
): unknown {
  if (signal.aborted || !(error instanceof TransportError)) return error;
  switch (error.kind) {
    case "connect":
      return new Refusal(`could not connect to ${target.host}:${target.port}`, error.detail);
    case "tls":
      return new Refusal(`TLS handshake with ${target.host} failed`, error.detail);
    case "aborted":
      return error;
    default:
      return protocolRefusal(error, settings);
  }
}

/** Maps the HTTP parser's complaints (llhttp codes) to the reasons we show. */
function protocolRefusal(
  error: TransportError,
  { maxBytes, kind }: Pick<Settings, "maxBytes" | "kind">,
): Refusal {
  const code = error.code ?? "";
  const text = `${code} ${error.detail}`;
  if (code === "UPGRADE") {
    return new Refusal(`${kind.what} server switched protocols`, error.detail);
  }
  if (code === "HEADER_COUNT") return new Refusal("too many response headers", error.detail);
  // A length too long for the parser's 64-bit counter is, above all, too large.
  if (/Content-Length overflow/i.test(text)) {
    return new Refusal(`${kind.what} larger than ${maxBytes} bytes`, error.detail);
  }
  // RFC 9112 section 6.3: both framings at once is a smuggling sign, handled as an error.
  if (/Transfer-Encoding can't be present with Content-Length/i.test(text)) {
    return new Refusal("both Transfer-Encoding and Content-Length", error.detail);
  }
  if (/HEADER_OVERFLOW|HPE_HEADER_OVERFLOW/.test(text)) {
    return new Refusal("response headers too large", error.detail);
  }
  if (/CONTENT_LENGTH/i.test(text)) return new Refusal("malformed content-length", error.detail);
  if (/TRANSFER_ENCODING/i.test(text)) {
    return new Refusal("unsupported transfer encoding", error.detail);
  }
  if (/CHUNK/i.test(text)) return new Refusal("malformed chunked encoding", error.detail);
  if (error.kind === "closed") {
    return new Refusal(
      "connection closed before the response headers were complete",
      error.detail,
    );
  }
  return new Refusal("malformed HTTP response", error.detail);
}

/** The value of a header that must not be repeated with different values. */
function single(headers: Map<string, string[]>, name: string): string | undefined {
  const values = headers.get(name);
  if (!values) return undefined;
  if (values.some((v) => v !== values[0])) throw new Refusal(`conflicting ${name} headers`);
  return values[0];
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Controls other than horizontal tab; CR and LF here would mean a smuggled header line. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/**
 * Collects the body up to `maxBytes`: a Content-Length over the budget is refused before
 * anything is read, and the connection is closed as soon as the bytes received pass it.
 */
async function readBody(
  response: PinnedResponse,
  settings: Pick<Settings, "maxBytes" | "kind">,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const { maxBytes, kind } = settings;
  const tooLarge = () => new Refusal(`${kind.what} larger than ${maxBytes} bytes`);
  if (response.status === 204 || response.status === 205) return new Uint8Array(0);
  const transferEncoding = response.headers.get("transfer-encoding");
  if (transferEncoding) {
    const codings = transferEncoding.join(",").split(",").map((c) => c.trim().toLowerCase());
    if (codings.length !== 1 || codings[0] !== "chunked") {
      throw new Refusal("unsupported transfer encoding");
    }
  } else {
    const contentLength = response.headers.get("content-length");
    if (contentLength) {
      const values = contentLength.join(",").split(",").map((v) => v.trim());
      if (values.some((v) => v !== values[0]) || !/^[0-9]+$/.test(values[0])) {
        throw new Refusal("malformed content-length");
      }
      const digits = values[0].replace(/^0+(?=.)/, "");
      if (digits.length > 15 || Number(digits) > maxBytes) throw tooLarge();
    }
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const iterator = response.body[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await abortable(iterator.next(), signal);
      if (next.done) break;
      total += next.value.length;
      if (total > maxBytes) throw tooLarge();
      chunks.push(next.value);
    }
  } catch (error) {
    if (error instanceof TransportError) {
      if (error.kind === "closed") {
        throw new Refusal(
          transferEncoding
            ? "malformed chunked encoding"
            : `connection closed before the ${kind.what} was complete`,
          error.detail,
        );
      }
      throw protocolRefusal(error, settings);
    }
    throw error;
  } finally {
    response.close();
  }
  return concat(chunks, total);
}

// ---------------------------------------------------------------------------
// Small helpers

// ---------------------------------------------------------------------------
// Small helpers

/**
 * Rejects as soon as the signal aborts, even if `promise` ignores signals
 * (an injected resolver). A value that arrives after the abort is passed to
 * `onLate` so a late connection still gets closed.
 */
function abortable<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  onLate?: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Aborted());
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) onLate?.(value);
        else resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return String(error).slice(0, 300);
}

// ---------------------------------------------------------------------------
// POST through the same defences (webhook deliveries)

export interface PinnedPostOptions
  extends Pick<FetchImageOptions, "resolve" | "allowLoopbackHttpForTests" | "caCerts" | "dial"> {
  /** Budget for the whole request: DNS, connect, TLS, sending, the response head. */
  timeoutMs?: number;
  headers: Record<string, string>;
  body: string;
}

export type PinnedPostResult =
  | { ok: true; status: number }
  | { ok: false; status: number | null; reason: string; detail?: string };

/**
 * POSTs `body` to `url` with the image fetcher's address policy: every resolved address checked,
 * the connection pinned to a checked address, and no redirect followed (a 3xx is an answer, not a
 * hop). Only the status is read; the receiver's body is ignored. Never throws for anything the
 * URL or the remote side does.
 */
export async function postPinned(
  url: string,
  options: PinnedPostOptions,
): Promise<PinnedPostResult> {
  const settings = readSettings({ ...options, maxRedirects: 0, maxBytes: 0 });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, settings.timeoutMs);
  let response: PinnedResponse | undefined;
  try {
    const target = parseTarget(url, settings);
    const addresses = await resolveTarget(target, settings, controller.signal);
    response = await send(target, addresses, settings, controller.signal, {
      method: "POST",
      headers: { ...options.headers, Connection: "close" },
      body: new TextEncoder().encode(options.body),
    });
    const status = response.status;
    if (status >= 200 && status <= 299) return { ok: true, status };
    const reason = REDIRECT_STATUSES.has(status)
      ? `answered HTTP ${status}; redirects are not followed`
      : `answered HTTP ${status}`;
    return { ok: false, status, reason };
  } catch (error) {
    if (timedOut) {
      return {
        ok: false,
        status: null,
        reason: `timed out after ${formatDuration(settings.timeoutMs)}`,
      };
    }
    if (error instanceof Refusal) {
      return error.detail === undefined
        ? { ok: false, status: null, reason: error.message }
        : { ok: false, status: null, reason: error.message, detail: error.detail };
    }
    return { ok: false, status: null, reason: "request failed", detail: describe(error) };
  } finally {
    clearTimeout(timer);
    response?.close();
  }
}
