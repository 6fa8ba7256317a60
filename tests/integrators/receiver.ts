/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that verifies every delivery with
 * the `standardwebhooks` package, as an integrator's server would. It can be told to be down
 * (answer 503) for its first N requests.
 */
import { Webhook } from "standardwebhooks";

export interface Received {
  body: string;
  headers: Record<string, string>;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface Receiver {
  url: string;
  /** Requests seen, verified or not. */
  hits: number;
  verified: Received[];
  rejected: string[];
  setSecret(secret: string): void;
  /** Answer 503 to the next `n` requests. */
  downFor(n: number): void;
  /** Resolves once `n` deliveries verified. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export function startReceiver(): Receiver {
  let secret: string | null = null;
  let down = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const r: Receiver = {
    url: "",
    hits: 0,
    verified: [],
    rejected: [],
    setSecret: (s) => (secret = s),
    downFor: (n) => (down = n),
    waitFor(n, timeoutMs = 30_000) {
      if (r.verified.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${r.verified.length} of ${n} deliveries arrived`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: () => server.shutdown(),
  };
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    r.hits++;
    const body = await req.text();
    if (down > 0) {
      down--;
      return new Response("down", { status: 503 });
    }
    const headers = Object.fromEntries(req.headers);
    try {
      const payload = new Webhook(secret!).verify(body, headers) as Received["payload"];
      r.verified.push({ body, headers, payload });
      for (const w of waiters.filter((w) => r.verified.length >= w.n)) w.resolve();
      return new Response(null, { status: 204 });
    } catch (e) {
      r.rejected.push(String(e));
      return new Response("bad signature", { status: 400 });
    }
  });
  r.url = `http://127.0.0.1:${server.addr.port}/hooks/tokens`;
  return r;
}
