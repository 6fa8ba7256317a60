/**
 * One HTTP/1.1 exchange with a server at an address that was already checked, for the image
 * fetcher's GETs and the webhook sender's POSTs.
 *
 * The HTTP is done by `node:http` / `node:https` (`request`): request framing, response parsing,
 * chunked and Content-Length bodies, and TLS with SNI and certificate checks against the URL's
 * host name. Deno implements both modules natively, and so does Deno Deploy, so this runs there
 * unchanged. What keeps the request on the checked address is the `lookup` option: the library
 * asks it instead of DNS, and it answers with the one address the policy approved, so a DNS
 * rebinding answer never reaches the socket. A test (tests/metadata/image/pinned-transport.test.ts)
 * fails if Deno ever ignored `lookup`.
 *
 * The code of ours that remains is what no client library offers: trying the checked addresses
 * one at a time (each attempt pinned to exactly one), checking the connected socket's peer is
 * that address, the test-only dial gate, and handing the body out chunk by chunk so the caller
 * can stop at its size budget. Policy (which addresses, redirects, budgets, content rules) lives
 * in fetch-image.ts.
 */

import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import { type ParsedIp, parseIp } from "../../kernel/ipaddr.ts";

const MAX_CONNECT_ATTEMPTS = 3;
/** More header lines than this is refused, as the hand-written parser did. */
const MAX_HEADER_COUNT = 100;

export interface PinnedExchange {
  url: URL;
  /** Host name for SNI and certificate checks (IPv6 without brackets). */
  host: string;
  port: number;
  /** Already checked by the caller; tried in order, one connection each. */
  addresses: ParsedIp[];
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: Uint8Array;
  /** Extra PEM trust anchors (test-only: a local CA). */
  caCerts?: string[];
  /** Test-only: called with each address just before it is dialled; throwing refuses it. */
  dial?: (to: { hostname: string; port: number }) => void;
  signal: AbortSignal;
}

export interface PinnedResponse {
  status: number;
  /** Header names lower-cased, every value kept (duplicates included). */
  headers: Map<string, string[]>;
  /** The body, chunk by chunk, as it arrives. Stopping early closes the connection. */
  body: AsyncIterable<Uint8Array>;
  /** Closes the connection. */
  close(): void;
}

/** Why an exchange failed, in terms the policy layer maps to reasons. */
export class TransportError extends Error {
  constructor(
    readonly kind: "connect" | "tls" | "protocol" | "closed" | "aborted",
    readonly detail: string,
    readonly code?: string,
  ) {
    super(`${kind}: ${detail}`);
  }
}

/** Sends the request and resolves with the final response head (after any 1xx). */
export async function exchange(request: PinnedExchange): Promise<PinnedResponse> {
  let lastError: TransportError | undefined;
  for (const ip of request.addresses.slice(0, MAX_CONNECT_ATTEMPTS)) {
    try {
      return await attempt(request, ip);
    } catch (error) {
      if (!(error instanceof TransportError) || error.kind !== "connect") throw error;
      if (request.signal.aborted) throw new TransportError("aborted", "aborted");
      lastError = error;
    }
  }
  throw lastError ?? new TransportError("connect", "no address to connect to");
}

function attempt(request: PinnedExchange, ip: ParsedIp): Promise<PinnedResponse> {
  return new Promise<PinnedResponse>((resolve, reject) => {
    const { signal } = request;
    if (signal.aborted) return reject(new TransportError("aborted", "aborted"));
    try {
      request.dial?.({ hostname: ip.address, port: request.port });
    } catch (error) {
      return reject(new TransportError("connect", describe(error)));
    }
    const tls = request.url.protocol === "https:";
    const family = ip.address.includes(":") ? 6 : 4;
    let settled = false;
    const fail = (error: TransportError) => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(error);
    };
    const options: https.RequestOptions = {
      method: request.method,
      host: request.host,
      port: request.port,
      path: request.url.pathname + request.url.search,
      headers: { Host: request.url.host, ...request.headers },
      setHost: false,
      agent: false,
      family,
      // The pin: the library asks this instead of DNS and gets only the checked address.
      lookup: (_hostname, opts, callback) => {
        const all = typeof opts === "object" && opts !== null && opts.all === true;
        if (all) {
          (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{
            address: ip.address,
            family,
          }]);
        } else {
          (callback as (e: null, a: string, f: number) => void)(null, ip.address, family);
        }
      },
    };
    if (tls) {
      if (request.caCerts) options.ca = request.caCerts;
      options.rejectUnauthorized = true;
      // SNI and the certificate check use the URL's host name, not the dialled address.
      if (ip.address !== request.host) options.servername = request.host;
    }
    const req = (tls ? https : http).request(options);
    const onAbort = () => fail(new TransportError("aborted", "aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal.removeEventListener("abort", onAbort));

    // Which stage failed decides the reason: before TCP is up the address was unreachable (the
    // next one is tried); before TLS is up it was the handshake; after, the HTTP exchange.
    let tcpUp = false;
    let ready = false;
    req.on("socket", (socket: Socket) => {
      socket.once("connect", () => tcpUp = true);
      socket.once(tls ? "secureConnect" : "connect", () => {
        tcpUp = ready = true;
        // Belt and braces: the peer must be the address that was checked.
        const peer = socket.remoteAddress;
        const same = peer !== undefined &&
          (parseIp(peer)?.address === ip.address || peer === `::ffff:${ip.address}`);
        if (peer !== undefined && !same) {
          fail(new TransportError("connect", `connected to ${peer}, not ${ip.address}`));
        }
      });
    });
    req.on("error", (error: Error & { code?: string }) => {
      const kind = ready
        ? error.code === "ECONNRESET" || /socket hang up/i.test(error.message)
          ? "closed"
          : "protocol"
        : tls && (tcpUp || isTlsError(error))
        ? "tls"
        : "connect";
      fail(new TransportError(kind, describe(error), error.code));
    });
    req.on("upgrade", () => fail(new TransportError("protocol", "switched protocols", "UPGRADE")));
    req.on("response", (res: http.IncomingMessage) => {
      if (settled) return res.destroy();
      if (res.rawHeaders.length / 2 > MAX_HEADER_COUNT) {
        res.destroy();
        return fail(new TransportError("protocol", "too many response headers", "HEADER_COUNT"));
      }
      settled = true;
      resolve({
        status: res.statusCode ?? 0,
        headers: headerMap(res.rawHeaders),
        body: bodyOf(res),
        close: () => {
          res.destroy();
          req.destroy();
        },
      });
    });
    req.end(request.body);
  });
}

/** The response body as an async iterable whose errors are TransportErrors. */
async function* bodyOf(res: http.IncomingMessage): AsyncGenerator<Uint8Array> {
  let complete = false;
  res.once("end", () => complete = true);
  try {
    for await (const chunk of res) {
      yield chunk instanceof Uint8Array ? chunk : new TextEncoder().encode(String(chunk));
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new TransportError(
      code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" ? "closed" : "protocol",
      describe(error),
      code,
    );
  } finally {
    res.destroy();
  }
  if (!complete || res.complete === false) {
    throw new TransportError("closed", "connection closed before the body was complete");
  }
}

function headerMap(raw: string[]): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i].toLowerCase();
    headers.set(key, [...(headers.get(key) ?? []), raw[i + 1]]);
  }
  return headers;
}

function isTlsError(error: Error & { code?: string }): boolean {
  const text = `${error.code ?? ""} ${error.message}`;
  return /CERT|TLS|SSL|certificate|handshake|UnknownIssuer|NotValidForName/i.test(text);
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return String(error).slice(0, 300);
}
