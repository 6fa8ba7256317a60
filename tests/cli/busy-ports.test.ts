/**
 * A port already in use is one line naming the setting and the port, and exit 2: for the
 * service's PORT, the embedded chain's CHAIN_PORT and its WebSocket port (CHAIN_PORT + 1), when
 * the service starts, and for `deno task chain`. No stack trace.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A free pair of ports (p, p + 1), held open until `release`. */
function holdPorts(): { port: number; held: Deno.Listener[] } {
  for (;;) {
    const first = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (first.addr as Deno.NetAddr).port;
    try {
      return { port, held: [first, Deno.listen({ hostname: "127.0.0.1", port: port + 1 })] };
    } catch {
      first.close();
    }
  }
}

async function run(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1", LOG_LEVEL: "warn", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

const SERVICE = ["run", "-A", "--unstable-kv", "--unstable-cron", "src/main.ts"];

Deno.test("a busy PORT, CHAIN_PORT or CHAIN_PORT + 1 is one line naming it, exit 2", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-ports-" });
  const { port, held } = holdPorts();
  const [rpc] = held;
  try {
    const cases: [string, string[], Record<string, string>, RegExp][] = [
      ["PORT", SERVICE, { PORT: String(port), CHAIN_PORT: "0" }, /^The service cannot listen/],
      ["CHAIN_PORT", SERVICE, { PORT: "0", CHAIN_PORT: String(port) }, /JSON-RPC cannot listen/],
      ["chain task", ["run", "-A", "src/chain/main.ts"], { CHAIN_PORT: String(port) }, /JSON-RPC/],
    ];
    for (const [what, args, env, re] of cases) {
      const r = await run(args, { DATA_DIR: dataDir, ...env });
      assertEquals(r.code, 2, `${what}: ${r.stderr}`);
      const line = r.stderr.trim().split("\n").filter((l) => /in use/.test(l));
      assertEquals(line.length, 1, r.stderr);
      assertMatch(line[0], re);
      assert(line[0].includes(`port ${port} (`), line[0]);
      assert(!/Uncaught|AddrInUse| {4}at /.test(r.stderr), r.stderr);
    }
    // Only the WebSocket port taken.
    rpc.close();
    const r = await run(SERVICE, { DATA_DIR: dataDir, PORT: "0", CHAIN_PORT: String(port) });
    assertEquals(r.code, 2, r.stderr);
    assertMatch(
      r.stderr,
      new RegExp(
        `WebSocket \\(CHAIN_PORT \\+ 1 = ${port + 1}\\).*port ${port + 1} \\(CHAIN_PORT\\)`,
      ),
    );
    assert(!/Uncaught| {4}at /.test(r.stderr), r.stderr);
  } finally {
    for (const l of held) {
      try {
        l.close();
      } catch { /* closed above */ }
    }
    await Deno.remove(dataDir, { recursive: true });
  }
});
