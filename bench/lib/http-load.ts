/** Loopback HTTP load: Deno.serve on port 0 in this thread, the client loop in a worker. */
import type { LoadRequest, LoadResult } from "./load-worker.ts";

export type { LoadResult };

export function loadInWorker(req: LoadRequest): Promise<LoadResult> {
  const worker = new Worker(new URL("./load-worker.ts", import.meta.url).href, { type: "module" });
  return new Promise<LoadResult>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<LoadResult>) => {
      worker.terminate();
      resolve(e.data);
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(`load worker failed: ${e.message}`));
    };
    worker.postMessage(req);
  });
}

export interface Served {
  url: string;
  close(): Promise<void>;
}

export function serveOnLoopback(handler: (req: Request) => Response | Promise<Response>): Served {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close: () => server.shutdown(),
  };
}
