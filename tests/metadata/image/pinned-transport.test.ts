/**
 * The pin itself: node:http's `lookup` option must be honoured by the runtime, or the checked
 * address would be a suggestion. Each test puts a decoy where the host name really resolves
 * (localhost -> 127.0.0.1) and the real server on the checked address (127.0.0.2, same port):
 * if `lookup` were ignored, the request would land on the decoy or fail, and these would fail.
 */
import assert from "node:assert/strict";
import { fetchImage, postPinned } from "../../../src/metadata/image/fetch-image.ts";
import { exchange } from "../../../src/metadata/image/pinned-transport.ts";
import { parseIp } from "../../../src/kernel/ipaddr.ts";
import { makePng } from "./fixtures.ts";

interface Pair {
  port: number;
  decoyAccepted: () => number;
  seen: string[];
  close(): Promise<void>;
}

/** A real server on 127.0.0.2:port and a decoy on 127.0.0.1:port that counts connections. */
function serverAndDecoy(body: Uint8Array): Pair | null {
  const seen: string[] = [];
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({ hostname: "127.0.0.2", port: 0, onListen() {} }, async (req) => {
      seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("host")}`);
      await req.arrayBuffer();
      return new Response(body.slice().buffer, { headers: { "content-type": "image/png" } });
    });
  } catch {
    return null; // no 127.0.0.2 on this machine's loopback
  }
  const port = server.addr.port;
  let decoy: Deno.Listener;
  try {
    decoy = Deno.listen({ hostname: "127.0.0.1", port });
  } catch {
    void server.shutdown();
    return null;
  }
  let accepted = 0;
  const loop = (async () => {
    try {
      for await (const conn of decoy) {
        accepted++;
        conn.close();
      }
    } catch {
      // closed
    }
  })();
  return {
    port,
    decoyAccepted: () => accepted,
    seen,
    async close() {
      decoy.close();
      await loop;
      await server.shutdown();
    },
  };
}

const canUse127002 = (() => {
  try {
    Deno.listen({ hostname: "127.0.0.2", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "transport: the request reaches the checked address, not where the name resolves",
  ignore: !canUse127002,
  fn: async () => {
    const pair = serverAndDecoy(new TextEncoder().encode("pinned"))!;
    try {
      const response = await exchange({
        url: new URL(`http://localhost:${pair.port}/x`),
        host: "localhost",
        port: pair.port,
        addresses: [parseIp("127.0.0.2")!],
        method: "GET",
        headers: {},
        signal: new AbortController().signal,
      });
      assert.equal(response.status, 200);
      let text = "";
      for await (const chunk of response.body) text += new TextDecoder().decode(chunk);
      assert.equal(text, "pinned");
      assert.deepEqual(pair.seen, [`GET /x localhost:${pair.port}`]);
      assert.equal(pair.decoyAccepted(), 0);
    } finally {
      await pair.close();
    }
  },
});

Deno.test({
  name: "transport: image GETs and webhook POSTs both go to the checked address",
  ignore: !canUse127002,
  fn: async () => {
    const png = makePng(3, 3);
    const pair = serverAndDecoy(png)!;
    try {
      const resolve = () => Promise.resolve(["127.0.0.2"]);
      const image = await fetchImage(`http://localhost:${pair.port}/a.png`, {
        resolve,
        allowLoopbackHttpForTests: true,
        timeoutMs: 5000,
      });
      assert.ok(image.ok, JSON.stringify(image));
      assert.deepEqual(image.bytes, png);
      const post = await postPinned(`http://localhost:${pair.port}/hook`, {
        resolve,
        allowLoopbackHttpForTests: true,
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.deepEqual(post, { ok: true, status: 200 });
      assert.deepEqual(pair.seen, [
        `GET /a.png localhost:${pair.port}`,
        `POST /hook localhost:${pair.port}`,
      ]);
      assert.equal(pair.decoyAccepted(), 0);

      // The same name, checked in production mode, is refused before any connection.
      const refused = await fetchImage(`https://localhost:${pair.port}/a.png`, { resolve });
      assert.deepEqual(refused.ok ? null : refused.reason, "host localhost is not public");
      const privateAnswer = await postPinned(`https://hooks.test:${pair.port}/hook`, {
        resolve: () => Promise.resolve(["10.0.0.7"]),
        headers: {},
        body: "{}",
      });
      assert.ok(!privateAnswer.ok);
      assert.equal(privateAnswer.reason, "host hooks.test resolves to a non-public address");
      assert.equal(pair.seen.length, 2);
      assert.equal(pair.decoyAccepted(), 0);
    } finally {
      await pair.close();
    }
  },
});

Deno.test({
  name: "transport: a peer other than the checked address is refused (lookup answer enforced)",
  ignore: !canUse127002,
  fn: async () => {
    // Dialling 127.0.0.2 where only the decoy (127.0.0.1) listens must fail to connect, not
    // fall back to the name's own resolution.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    let accepted = 0;
    const loop = (async () => {
      try {
        for await (const conn of listener) {
          accepted++;
          conn.close();
        }
      } catch {
        // closed
      }
    })();
    try {
      const port = (listener.addr as Deno.NetAddr).port;
      const result = await postPinned(`http://localhost:${port}/hook`, {
        resolve: () => Promise.resolve(["127.0.0.2"]),
        allowLoopbackHttpForTests: true,
        headers: {},
        body: "{}",
      });
      assert.ok(!result.ok);
      assert.equal(result.reason, `could not connect to localhost:${port}`);
      assert.equal(accepted, 0);
    } finally {
      listener.close();
      await loop;
    }
  },
});
