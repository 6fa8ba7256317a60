/**
 * Fetches a client-supplied image URL on the server, defensively.
 *
 * This is the service's main server-side request forgery surface, so it does
 * not use `fetch()`: fetch resolves the host name itself, which would let a
 * DNS rebinding attack answer our policy check with a public address and the
 * connection with a private one. Instead every hop is resolved once, every
 * resolved address is checked, and the TCP connection goes to the checked
 * address while TLS still verifies the certificate against the URL's name.
 * HTTP/1.1 is spoken by hand so size, time and redirects stay under our
 * control. Every failure becomes `{ ok: false, reason }` with a reason short
 * enough to show to the API client.
 */

import { classifyAddress, isLoopbackAddress } from "./address-policy.ts";
import { type ParsedIp, parseIp } from "../../kernel/ipaddr.ts";
import { inspectImage, MAX_IMAGE_BYTES, type SniffedImage } from "./sniff.ts";

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
  /** Test-only: replaces `Deno.connect`, e.g. to count or forbid connection attempts. */
  connect?: (options: Deno.ConnectOptions) => Promise<Deno.TcpConn>;
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
const MAX_HEAD_BYTES = 32 * 1024;
const MAX_HEADER_COUNT = 100;
const MAX_INTERIM_RESPONSES = 5;
const MAX_CONNECT_ATTEMPTS = 3;
const MAX_CHUNK_LINE = 1024;
const READ_CHUNK = 16 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Thrown to unwind with a client-facing reason. */
class Refusal extends Error {
  constructor(reason: string, readonly detail?: string) {
    super(reason);
  }
}

class Aborted extends Error {}

interface Settings {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  resolve: (hostname: string, signal?: AbortSignal) => Promise<string[]>;
  testMode: boolean;
  caCerts?: string[];
  connect: (options: Deno.ConnectOptions) => Promise<Deno.TcpConn>;
}

interface Target {
  url: URL;
  /** Host name for DNS, SNI and certificate checks (IPv6 without brackets). */
  host: string;
  /** Set when the URL names an IP address directly, so there is nothing to resolve. */
  literal: ParsedIp | null;
  port: number;
}

/**
 * Fetches `url` and returns the bytes if they are a PNG, JPEG or WebP image.
 * Never throws for anything the URL or the remote side does; only invalid
 * options (a programming error) raise a RangeError.
 */
export async function fetchImage(
  url: string,
  options: FetchImageOptions = {},
): Promise<FetchImageResult> {
  const settings = readSettings(options);
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
    return { ok: false, reason: "could not fetch image", detail: describe(error) };
  } finally {
    cancelTimer();
    options.signal?.removeEventListener("abort", relayAbort);
  }
}

function readSettings(options: FetchImageOptions): Settings {
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
    timeoutMs,
    maxBytes,
    maxRedirects,
    resolve: options.resolve ?? resolveWithDns,
    testMode: options.allowLoopbackHttpForTests === true,
    caCerts: options.caCerts,
    connect: options.connect ?? Deno.connect,
  };
}

async function fetchFollowingRedirects(
  url: string,
  settings: Settings,
  signal: AbortSignal,
): Promise<FetchImageResult> {
  let target = parseTarget(url, settings);
  for (let redirects = 0;; redirects++) {
    const response = await fetchOnce(target, settings, signal);
    if (response.kind === "body") {
      const inspected = inspectImage(response.bytes);
      if (!inspected.ok) throw new Refusal(inspected.reason);
      return { ok: true, bytes: response.bytes, finalUrl: target.url.href, image: inspected.image };
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
// Address checks and connection

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

/** Holds the open connection and closes it the moment the fetch is aborted. */
class ConnectionGuard {
  #conn: Deno.Conn | null = null;
  readonly #signal: AbortSignal;
  readonly #onAbort = () => this.close();

  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener("abort", this.#onAbort);
  }

  hold(conn: Deno.Conn): void {
    this.#conn = conn;
    if (this.#signal.aborted) this.close();
  }

  /** Forgets a connection that was handed over (e.g. consumed by startTls). */
  release(): void {
    this.#conn = null;
  }

  close(): void {
    const conn = this.#conn;
    this.#conn = null;
    closeQuietly(conn);
  }

  dispose(): void {
    this.#signal.removeEventListener("abort", this.#onAbort);
    this.close();
  }
}

async function connect(
  target: Target,
  addresses: ParsedIp[],
  settings: Settings,
  guard: ConnectionGuard,
  signal: AbortSignal,
): Promise<Deno.Conn> {
  let lastError: unknown;
  for (const ip of addresses.slice(0, MAX_CONNECT_ATTEMPTS)) {
    let tcp: Deno.TcpConn;
    try {
      // The canonical text of the checked address is an IP literal, so no
      // name resolution happens here: we reach exactly what was checked.
      tcp = await abortable(
        settings.connect({
          hostname: ip.address,
          port: target.port,
          transport: "tcp",
          autoSelectFamily: false,
          signal,
        }),
        signal,
        closeQuietly,
      );
    } catch (error) {
      if (signal.aborted) throw error;
      lastError = error;
      continue;
    }
    guard.hold(tcp);
    if (target.url.protocol === "http:") return tcp;
    return await startTls(tcp, target, settings, guard, signal);
  }
  throw new Refusal(`could not connect to ${target.host}:${target.port}`, describe(lastError));
}

async function startTls(
  tcp: Deno.TcpConn,
  target: Target,
  settings: Settings,
  guard: ConnectionGuard,
  signal: AbortSignal,
): Promise<Deno.TlsConn> {
  let tls: Deno.TlsConn;
  try {
    // SNI and certificate verification use the URL's host name even though
    // the socket was opened to an address.
    tls = await abortable(
      Deno.startTls(tcp, {
        hostname: target.host,
        caCerts: settings.caCerts,
        alpnProtocols: ["http/1.1"],
      }),
      signal,
      closeQuietly,
    );
  } catch (error) {
    if (signal.aborted) throw error;
    throw new Refusal(`TLS connection to ${target.host} failed`, describe(error));
  }
  // startTls consumed the TCP resource; closing the TLS connection closes both.
  guard.release();
  guard.hold(tls);
  try {
    await abortable(tls.handshake(), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new Refusal(`TLS handshake with ${target.host} failed`, describe(error));
  }
  return tls;
}

// ---------------------------------------------------------------------------
// HTTP/1.1

type Response =
  | { kind: "redirect"; location: string }
  | { kind: "body"; bytes: Uint8Array };

async function fetchOnce(
  target: Target,
  settings: Settings,
  signal: AbortSignal,
): Promise<Response> {
  const addresses = await resolveTarget(target, settings, signal);
  const guard = new ConnectionGuard(signal);
  try {
    const conn = await connect(target, addresses, settings, guard, signal);
    await writeAll(conn, buildRequest(target));
    const reader = new Reader(conn);
    const head = await readFinalHead(reader);

    if (REDIRECT_STATUSES.has(head.status)) {
      const location = single(head.headers, "location");
      if (location === undefined) {
        throw new Refusal(`HTTP ${head.status} redirect without a location`);
      }
      return { kind: "redirect", location };
    }
    if (head.status < 200 || head.status > 299) {
      throw new Refusal(`image server answered HTTP ${head.status}`);
    }
    const encoding = single(head.headers, "content-encoding");
    if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
      throw new Refusal("compressed responses are not supported");
    }
    return { kind: "body", bytes: await readBody(reader, head, settings.maxBytes) };
  } finally {
    guard.dispose();
  }
}

function buildRequest(target: Target): Uint8Array {
  const path = target.url.pathname + target.url.search;
  // WHATWG URL percent-encodes controls and spaces; this keeps it that way
  // should that ever change, since a CR or LF here would inject headers.
  if (!/^[\x21-\x7e]+$/.test(path)) throw new Refusal("URL path cannot be sent");
  const lines = [
    `GET ${path} HTTP/1.1`,
    `Host: ${target.url.host}`,
    `User-Agent: ${USER_AGENT}`,
    "Accept: image/png,image/jpeg,image/webp",
    "Accept-Encoding: identity",
    "Connection: close",
  ];
  return new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n");
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await conn.write(data.subarray(written));
}

interface Head {
  status: number;
  headers: Map<string, string[]>;
}

/** Buffered reads that never pull more than the caller asks for. */
class Reader {
  #buffer = new Uint8Array(0);
  #eof = false;

  constructor(readonly conn: Deno.Conn) {}

  get buffered(): Uint8Array {
    return this.#buffer;
  }

  /** Reads up to `max` more bytes into the buffer; false once the peer has closed. */
  async fill(max: number): Promise<boolean> {
    if (this.#eof) return false;
    const chunk = new Uint8Array(Math.max(1, Math.min(max, READ_CHUNK)));
    const n = await this.conn.read(chunk);
    if (n === null) {
      this.#eof = true;
      return false;
    }
    const data = chunk.subarray(0, n);
    if (this.#buffer.length === 0) {
      this.#buffer = data;
    } else {
      const joined = new Uint8Array(this.#buffer.length + n);
      joined.set(this.#buffer);
      joined.set(data, this.#buffer.length);
      this.#buffer = joined;
    }
    return true;
  }

  take(n: number): Uint8Array {
    const out = this.#buffer.subarray(0, n);
    this.#buffer = this.#buffer.subarray(n);
    return out;
  }

  /** Reads exactly `into.length` bytes; false if the peer closed first. */
  async readFull(into: Uint8Array): Promise<boolean> {
    let filled = 0;
    const fromBuffer = this.take(Math.min(this.#buffer.length, into.length));
    into.set(fromBuffer);
    filled += fromBuffer.length;
    while (filled < into.length) {
      if (this.#eof) return false;
      const n = await this.conn.read(
        into.subarray(filled, Math.min(into.length, filled + READ_CHUNK)),
      );
      if (n === null) {
        this.#eof = true;
        return false;
      }
      filled += n;
    }
    return true;
  }

  /** Reads one CRLF-terminated line (without the CRLF) of at most `max` bytes. */
  async readLine(max: number): Promise<string | null> {
    let searchFrom = 0;
    for (;;) {
      const at = indexOfCrlf(this.#buffer, searchFrom);
      if (at >= 0) {
        if (at > max) return null;
        const line = this.take(at + 2).subarray(0, at);
        return String.fromCharCode(...line);
      }
      if (this.#buffer.length > max + 1) return null;
      searchFrom = Math.max(0, this.#buffer.length - 1);
      if (!(await this.fill(max + 2 - this.#buffer.length))) return null;
    }
  }
}

async function readFinalHead(reader: Reader): Promise<Head> {
  for (let interim = 0; interim <= MAX_INTERIM_RESPONSES; interim++) {
    const head = parseHead(await readHeadBytes(reader));
    // 1xx responses (e.g. 103 Early Hints) precede the real one.
    if (head.status >= 200 || head.status === 101) {
      if (head.status === 101) throw new Refusal("image server switched protocols");
      return head;
    }
  }
  throw new Refusal("image server sent too many interim responses");
}

async function readHeadBytes(reader: Reader): Promise<Uint8Array> {
  let searchFrom = 0;
  for (;;) {
    const buffer = reader.buffered;
    const end = indexOfHeadEnd(buffer, searchFrom);
    if (end >= 0) return reader.take(end + 4).subarray(0, end);
    if (buffer.length >= MAX_HEAD_BYTES) throw new Refusal("response headers too large");
    searchFrom = Math.max(0, buffer.length - 3);
    if (!(await reader.fill(MAX_HEAD_BYTES - buffer.length))) {
      throw new Refusal("connection closed before the response headers were complete");
    }
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function parseHead(bytes: Uint8Array): Head {
  const malformed = () => new Refusal("malformed HTTP response");
  let text = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.[01] ([1-9][0-9]{2})(?: [^\r\n]*)?$/.exec(lines[0]);
  if (!status) throw malformed();
  if (lines.length - 1 > MAX_HEADER_COUNT) throw new Refusal("too many response headers");
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    // Obsolete line folding and stray control characters are refused rather
    // than guessed at: lenient parsing is where response splitting lives.
    const colon = line.indexOf(":");
    if (colon <= 0) throw malformed();
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (!TOKEN.test(name) || hasControlCharacter(value)) throw malformed();
    const key = name.toLowerCase();
    headers.set(key, [...(headers.get(key) ?? []), value]);
  }
  return { status: Number(status[1]), headers };
}

/** Controls other than horizontal tab; CR and LF here would mean a smuggled header line. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/** The value of a header that must not be repeated with different values. */
function single(headers: Map<string, string[]>, name: string): string | undefined {
  const values = headers.get(name);
  if (!values) return undefined;
  if (values.some((v) => v !== values[0])) throw new Refusal(`conflicting ${name} headers`);
  return values[0];
}

async function readBody(reader: Reader, head: Head, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new Refusal(`image larger than ${maxBytes} bytes`);
  if (head.status === 204 || head.status === 205) return new Uint8Array(0);

  const transferEncoding = head.headers.get("transfer-encoding");
  if (transferEncoding) {
    const codings = transferEncoding.join(",").split(",").map((c) => c.trim().toLowerCase());
    if (codings.length !== 1 || codings[0] !== "chunked") {
      throw new Refusal("unsupported transfer encoding");
    }
    return await readChunked(reader, maxBytes, tooLarge);
  }

  const contentLength = head.headers.get("content-length");
  if (contentLength) {
    const values = contentLength.join(",").split(",").map((v) => v.trim());
    if (values.some((v) => v !== values[0]) || !/^[0-9]+$/.test(values[0])) {
      throw new Refusal("malformed content-length");
    }
    const digits = values[0].replace(/^0+(?=.)/, "");
    if (digits.length > 15 || Number(digits) > maxBytes) throw tooLarge();
    const body = new Uint8Array(Number(digits));
    if (!(await reader.readFull(body))) {
      throw new Refusal("connection closed before the image was complete");
    }
    return body;
  }

  // No framing: the body runs until the server closes. Read at most one byte
  // past the limit, which is enough to know it is too large.
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buffered = reader.take(Math.min(reader.buffered.length, maxBytes + 1));
  chunks.push(buffered);
  total += buffered.length;
  while (total <= maxBytes) {
    const chunk = new Uint8Array(Math.min(READ_CHUNK, maxBytes + 1 - total));
    const n = await reader.conn.read(chunk);
    if (n === null) return concat(chunks, total);
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  throw tooLarge();
}

async function readChunked(
  reader: Reader,
  maxBytes: number,
  tooLarge: () => Refusal,
): Promise<Uint8Array> {
  const malformed = () => new Refusal("malformed chunked encoding");
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const line = await reader.readLine(MAX_CHUNK_LINE);
    if (line === null) throw malformed();
    const match = /^([0-9A-Fa-f]+)[ \t]*(?:;.*)?$/.exec(line);
    if (!match) throw malformed();
    const hex = match[1].replace(/^0+(?=.)/, "");
    // Refuse on the announced size, before reading the chunk.
    if (hex.length > 8) throw tooLarge();
    const size = parseInt(hex, 16);
    if (size === 0) break; // Trailers are irrelevant: the connection is closed next.
    if (total + size > maxBytes) throw tooLarge();
    const chunk = new Uint8Array(size);
    if (!(await reader.readFull(chunk))) throw malformed();
    chunks.push(chunk);
    total += size;
    if ((await reader.readLine(0)) !== "") throw malformed();
  }
  return concat(chunks, total);
}

// ---------------------------------------------------------------------------
// Small helpers

/**
 * Rejects as soon as the signal aborts, even if `promise` ignores signals
 * (an injected resolver, a TLS call). A value that arrives after the abort
 * is passed to `onLate` so a late connection still gets closed.
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

function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // Already closed, or consumed by startTls: nothing left to release.
  }
}

function indexOfCrlf(b: Uint8Array, from: number): number {
  for (let i = from; i + 1 < b.length; i++) if (b[i] === 13 && b[i + 1] === 10) return i;
  return -1;
}

function indexOfHeadEnd(b: Uint8Array, from: number): number {
  for (let i = from; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
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
  extends Pick<FetchImageOptions, "resolve" | "allowLoopbackHttpForTests" | "caCerts" | "connect"> {
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
 * hop). Only the status line is read; the receiver's body is ignored. Never throws for anything
 * the URL or the remote side does.
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
  const guard = new ConnectionGuard(controller.signal);
  try {
    const target = parseTarget(url, settings);
    const addresses = await resolveTarget(target, settings, controller.signal);
    const conn = await connect(target, addresses, settings, guard, controller.signal);
    await writeAll(conn, buildPost(target, options.headers, options.body));
    const head = await readFinalHead(new Reader(conn));
    if (head.status >= 200 && head.status <= 299) return { ok: true, status: head.status };
    const reason = REDIRECT_STATUSES.has(head.status)
      ? `answered HTTP ${head.status}; redirects are not followed`
      : `answered HTTP ${head.status}`;
    return { ok: false, status: head.status, reason };
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
    guard.dispose();
  }
}

function buildPost(target: Target, headers: Record<string, string>, body: string): Uint8Array {
  const path = target.url.pathname + target.url.search;
  if (!/^[\x21-\x7e]+$/.test(path)) throw new Refusal("URL path cannot be sent");
  const bytes = new TextEncoder().encode(body);
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${target.url.host}`,
    `Content-Length: ${bytes.length}`,
    "Connection: close",
  ];
  for (const [name, value] of Object.entries(headers)) {
    // Our own header values only; a CR or LF would still be a smuggled line, so refuse it.
    if (!TOKEN.test(name) || hasControlCharacter(value)) throw new Refusal(`bad header ${name}`);
    lines.push(`${name}: ${value}`);
  }
  const head = new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n");
  const out = new Uint8Array(head.length + bytes.length);
  out.set(head);
  out.set(bytes, head.length);
  return out;
}
