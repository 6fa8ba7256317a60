/**
 * `deno task dev:key` as a developer runs it: a subprocess against the service served over HTTP
 * on the embedded chain. It must buy access through the real portal flow, save a Solana CLI
 * keypair file and print one JSON line whose key works.
 */
import { Keypair } from "@solana/web3.js";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("deno task dev:key: funded wallet, keypair file, paid purchase, a working API key", async () => {
  const h = await startHarness();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-dev-key-" });
  try {
    const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
    const before = await h.services.connection.getBalance(h.treasury.publicKey);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "dev:key"],
      cwd: ROOT,
      env: { NO_COLOR: "1", SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr);
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    const printed = JSON.parse(lines.at(-1)!);
    assertEquals(Object.keys(printed).sort(), ["apiKey", "keypairPath", "wallet"]);
    assertMatch(printed.apiKey, /^tcb_live_[0-9a-f]+_[1-9A-HJ-NP-Za-km-z]+$/);
    assert(!stderr.includes(printed.apiKey), "the key is printed once, on stdout only");

    // Solana CLI format: a JSON array of the 64 secret-key bytes.
    assertEquals(printed.keypairPath, `${dataDir}/wallets/${printed.wallet}.json`);
    const bytes = JSON.parse(await Deno.readTextFile(printed.keypairPath));
    assertEquals(bytes.length, 64);
    const keypair = Keypair.fromSecretKey(Uint8Array.from(bytes));
    assertEquals(keypair.publicKey.toBase58(), printed.wallet);
    assertEquals((await Deno.stat(printed.keypairPath)).mode! & 0o777, 0o600, "owner-only file");

    const me = await h.request("/v1/me", { headers: bearer(printed.apiKey) });
    assertEquals(me.status, 200);
    assertEquals((await me.json()).wallet, printed.wallet);
    const after = await h.services.connection.getBalance(h.treasury.publicKey);
    assertEquals(after - before, 66_666_667, "USD 10 at 150 USD/SOL reached the treasury");
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("deno task dev:key with no service running says what to do in one line, exit 1", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "dev:key"],
    cwd: ROOT,
    env: { NO_COLOR: "1", SERVICE_URL: `http://127.0.0.1:${port}` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  assertEquals(out.code, 1, stderr);
  // Besides the two harmless npm lines the README names, one line: no stack trace.
  const ours = stderr.split("\n").filter((l) => !/^bigint: |DEP0040/.test(l));
  assertEquals(ours.length, 1, stderr);
  assertMatch(
    ours[0],
    /^dev:key failed: no service answers at http:\/\/127\.0\.0\.1:\d+ \(.*refused.*\): start it with `deno task start`/,
  );
});
