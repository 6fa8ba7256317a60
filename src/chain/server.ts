/**
 * HTTP and WebSocket listeners of the chain: JSON-RPC on the RPC port (PubSub on the next port
 * up, where web3.js looks for it, and also on the RPC port itself), the /admin/... control
 * surface, and the fault knobs (latency, failure rate, down) applied to RPC traffic.
 */
import { listenOn } from "../kernel/port-in-use.ts";
import { isAdminRoute, parseAdminBody } from "./admin-input.ts";
import { errorBody, handleJsonRpc, requestIds, RpcError } from "./jsonrpc.ts";
import type { PubSub } from "./pubsub.ts";
import type { ChainRateLimiter } from "./rate-limits.ts";

export interface ChainFaults {
  latencyMs: number;
  failureRate: number;
  down: boolean;
}

export interface AdminActions {
  state(): unknown;
  setFaults(f: Partial<ChainFaults> & { downForMs?: number }): void;
  advanceSlots(n: number): void;
  setPrice(p: { usd?: number; paused?: boolean }): void;
  airdrop(address: string, lamports: bigint): string;
}

export interface ListenOptions {
  hostname: string;
  port: number;
  /** Defaults to port + 1, the convention web3.js relies on. */
  wsPort?: number;
}

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export class ChainServer {
  #rpc: Deno.HttpServer | null = null;
  #ws: Deno.HttpServer | null = null;
  #port = 0;
  #wsPort = 0;
  faults: ChainFaults = { latencyMs: 0, failureRate: 0, down: false };
  /** The public endpoints' request limits (CHAIN_RPC_LIMITS=public); null: none. */
  rateLimits: ChainRateLimiter | null = null;
  /** Aborted when the listeners close, so a request held by injected latency does not hold them. */
  #closing = new AbortController();

  constructor(
    readonly hostname: string,
    readonly call: (method: string, params: unknown[]) => unknown,
    readonly pubsub: PubSub,
    readonly admin: AdminActions,
  ) {}

  get port(): number {
    return this.#port;
  }

  get wsPort(): number {
    return this.#wsPort;
  }

  /** Binds both listeners; with port 0 it looks for a free pair (p, p+1). */
  listen(opts: ListenOptions): void {
    if (opts.port !== 0) {
      this.#bind(opts.port, opts.wsPort ?? opts.port + 1);
      return;
    }
    let lastError: unknown;
    for (let attempt = 0; attempt < 50; attempt++) {
      const probe = Deno.listen({ hostname: this.hostname, port: 0 });
      const port = (probe.addr as Deno.NetAddr).port;
      probe.close();
      try {
        this.#bind(port, opts.wsPort ?? port + 1);
        return;
      } catch (e) {
        lastError = e;
        this.#closeNow();
      }
    }
    throw lastError;
  }

  #bind(port: number, wsPort: number): void {
    const quiet = () => {};
    this.#rpc = listenOn("CHAIN_PORT", port, "The embedded chain's JSON-RPC", () =>
      Deno.serve(
        { hostname: this.hostname, port, onListen: quiet },
        (req, info) => this.#handleRpcPort(req, clientOf(info)),
      ));
    this.#port = port;
    try {
      this.#ws = listenOn(
        "CHAIN_PORT",
        wsPort,
        `The embedded chain's WebSocket (CHAIN_PORT + 1 = ${wsPort})`,
        () =>
          Deno.serve(
            { hostname: this.hostname, port: wsPort, onListen: quiet },
            (req) => this.#handleWsPort(req),
          ),
      );
      this.#wsPort = wsPort;
    } catch (e) {
      this.#closeNow();
      throw e;
    }
  }

  #closeNow(): void {
    void this.#rpc?.shutdown();
    void this.#ws?.shutdown();
    this.#rpc = null;
    this.#ws = null;
  }

  /** Closes the listeners (connection refused) and drops PubSub clients. */
  async down(): Promise<void> {
    const servers = [this.#rpc, this.#ws];
    this.#rpc = null;
    this.#ws = null;
    this.#closing.abort();
    this.pubsub.closeAll();
    await Promise.all(servers.map((s) => s?.shutdown()));
  }

  /** Reopens on the same ports. */
  up(): void {
    if (this.#rpc) return;
    this.#closing = new AbortController();
    this.#bind(this.#port, this.#wsPort);
  }

  get isUp(): boolean {
    return this.#rpc !== null;
  }

  async close(): Promise<void> {
    await this.down();
  }

  #upgrade(req: Request): Response {
    const { socket, response } = Deno.upgradeWebSocket(req);
    this.pubsub.attach(socket);
    return response;
  }

  #handleWsPort(req: Request): Response {
    if (req.headers.get("upgrade")?.toLowerCase() === "websocket") return this.#upgrade(req);
    return new Response("WebSocket only", { status: 426 });
  }

  async #handleRpcPort(req: Request, client: string): Promise<Response> {
    try {
      return await this.#rpcPort(req, client);
    } catch {
      // Whatever went wrong, answer in JSON-RPC terms rather than with a bare 500, and as the
      // node does, without the exception's text.
      const err = new RpcError(-32603, "Internal error");
      return new Response(errorBody(null, err), { status: 200, headers: JSON_HEADERS });
    }
  }

  async #rpcPort(req: Request, client: string): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/admin/") || url.pathname === "/admin") {
      return await this.#handleAdmin(req, url.pathname);
    }
    if (req.headers.get("upgrade")?.toLowerCase() === "websocket") return this.#upgrade(req);
    const { latencyMs, failureRate } = this.faults;
    if (latencyMs > 0) {
      // A node going down ends the wait. A client that gave up does not: reading req.signal
      // has Deno.serve warn about its legacy abort after each response, and the answer to a
      // gone client is simply dropped.
      await abortableSleep(latencyMs, this.#closing.signal);
    }
    if (req.method === "GET" && url.pathname === "/health") {
      return new Response("ok", { headers: { "content-type": "text/plain" } });
    }
    if (req.method !== "POST") {
      return new Response("Used HTTP Method is not allowed. POST or OPTIONS is required", {
        status: 405,
      });
    }
    const body = await req.text();
    const limited = this.rateLimits?.check(client, body);
    if (limited) return limited;
    if (failureRate > 0 && Math.random() < failureRate) {
      const err = new RpcError(-32005, "Node is unhealthy", { numSlotsBehind: null });
      return new Response(errorBody(requestIds(body), err), { status: 503, headers: JSON_HEADERS });
    }
    const out = handleJsonRpc(body, this.call);
    return new Response(out ?? "", { status: 200, headers: JSON_HEADERS });
  }

  async #handleAdmin(req: Request, path: string): Promise<Response> {
    const reply = (status: number, body: unknown) =>
      new Response(JSON.stringify(body, (_k, v) => typeof v === "bigint" ? v.toString() : v), {
        status,
        headers: JSON_HEADERS,
      });
    const refuse = (status: number, code: string, message: string) =>
      reply(status, { error: { code, message, fields: {} } });
    if (path === "/admin/state") {
      if (req.method !== "GET") return refuse(405, "method_not_allowed", "use GET");
      return reply(200, this.admin.state());
    }
    if (!isAdminRoute(path)) return refuse(404, "not_found", `unknown admin route ${path}`);
    if (req.method !== "POST") return refuse(405, "method_not_allowed", "use POST");
    try {
      return await this.#runAdmin(path, await req.text(), reply);
    } catch {
      // The bodies are checked first (admin-input.ts), so this is our fault, not the caller's;
      // no exception text goes out.
      return refuse(500, "server_error", `${path} failed`);
    }
  }

  #runAdmin(
    path: Parameters<typeof parseAdminBody>[0],
    text: string,
    reply: (status: number, body: unknown) => Response,
  ): Response {
    switch (path) {
      case "/admin/faults": {
        const parsed = parseAdminBody(path, text);
        if (!parsed.ok) return reply(400, parsed.refusal);
        const { down, downForMs, ...rest } = parsed.body;
        this.admin.setFaults(rest);
        // Going down closes the listener this request arrived on: answer first.
        if (down !== undefined) setTimeout(() => this.admin.setFaults({ down, downForMs }), 0);
        return reply(200, {
          faults: { ...this.faults, ...(down === undefined ? {} : { down }) },
        });
      }
      case "/admin/slots": {
        const parsed = parseAdminBody(path, text);
        if (!parsed.ok) return reply(400, parsed.refusal);
        this.admin.advanceSlots(parsed.body.advance);
        return reply(200, this.admin.state());
      }
      case "/admin/price": {
        const parsed = parseAdminBody(path, text);
        if (!parsed.ok) return reply(400, parsed.refusal);
        this.admin.setPrice(parsed.body);
        return reply(200, this.admin.state());
      }
      case "/admin/airdrop": {
        const parsed = parseAdminBody(path, text);
        if (!parsed.ok) return reply(400, parsed.refusal);
        const signature = this.admin.airdrop(parsed.body.address, parsed.body.lamports);
        return reply(200, { signature });
      }
    }
  }
}

/** Limits are per client address, as on the public endpoints. */
function clientOf(info: Deno.ServeHandlerInfo): string {
  const addr = info.remoteAddr as Deno.Addr;
  return "hostname" in addr ? addr.hostname : "local";
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
