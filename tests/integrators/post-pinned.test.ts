/**
 * The pinned-address POST that webhook deliveries use: the image fetcher's address policy, the
 * connection to the checked address, no redirects, a time budget.
 */
import { postPinned } from "../../src/metadata/image/fetch-image.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";

const post = { headers: { "content-type": "application/json" }, body: "{}" };

Deno.test("a host resolving to a private address is refused before any connection, loopback too unless allowed", async () => {
  let connects = 0;
  const dial = () => {
    connects++;
  };
  for (const address of ["10.1.2.3", "169.254.169.254", "127.0.0.1", "::1", "fd00::1"]) {
    const r = await postPinned("https://hooks.example.test/x", {
      ...post,
      resolve: () => Promise.resolve([address]),
      dial,
    });
    assert(!r.ok);
    assertMatch(r.reason, /resolves to a non-public address/, address);
  }
  // One private answer among public ones refuses the whole host.
  const mixed = await postPinned("https://hooks.example.test/x", {
    ...post,
    resolve: () => Promise.resolve(["93.184.216.34", "10.0.0.1"]),
    dial,
  });
  assert(!mixed.ok);
  assertEquals(connects, 0);
});

Deno.test("the connection goes to the checked address; a redirect is an answer, not a hop; 2xx is ok", async () => {
  const seen: string[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname} ${await req.text()}`);
    return new URL(req.url).pathname === "/moved"
      ? Response.redirect("http://127.0.0.1:1/elsewhere", 307)
      : new Response(null, { status: 204 });
  });
  try {
    const port = server.addr.port;
    const dialed: string[] = [];
    const opts = {
      ...post,
      allowLoopbackHttpForTests: true,
      // The name resolves once, to the loopback receiver; the socket goes to that address.
      resolve: () => Promise.resolve(["127.0.0.1"]),
      dial: (o: { hostname: string; port: number }) => {
        dialed.push(`${o.hostname}:${o.port}`);
      },
    };
    const ok = await postPinned(`http://receiver.test:${port}/hook`, opts);
    assertEquals(ok, { ok: true, status: 204 });
    assertEquals(dialed, [`127.0.0.1:${port}`]);
    const moved = await postPinned(`http://receiver.test:${port}/moved`, opts);
    assert(!moved.ok);
    assertEquals(moved.status, 307);
    assertMatch(moved.reason, /redirects are not followed/);
    assertEquals(seen, ["POST /hook {}", "POST /moved {}"]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a receiver that never answers fails the attempt at the time budget", async () => {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of listener) held.push(c);
  })().catch(() => {});
  try {
    const r = await postPinned(`http://127.0.0.1:${listener.addr.port}/slow`, {
      ...post,
      allowLoopbackHttpForTests: true,
      timeoutMs: 200,
    });
    assert(!r.ok);
    assertEquals(r.reason, "timed out after 200 ms");
  } finally {
    listener.close();
    for (const c of held) c.close();
  }
});
