/** `deno task admin` as an operator runs it: on the KV file directly, and through --url. */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";
import { EventStore } from "../../events/store.ts";
import { allProjections } from "../../projections/index.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const TOKEN = "admin-token-abcdefghijklmnopqrstuvwxyz-0123";

async function admin(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  // web3.js may print a Node deprecation warning first; our error is the last line.
  const lastErr = () => JSON.parse(stderr.trim().split("\n").at(-1)!);
  return { code: out.code, stdout, stderr, lastErr, json: () => JSON.parse(stdout) };
}

Deno.test("deno task admin --kv: list, ban, lift, names, usage errors", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tcb-admin-cli-" });
  const path = `${dir}/kv.sqlite3`;
  try {
    const kv = await Deno.openKv(path);
    await new EventStore(kv, { projections: allProjections }).append([{
      stream: "purchase-p1",
      expectedVersion: 0,
      events: [{
        type: "KeyIssued",
        v: 1,
        data: { keyId: "ab12", purchaseId: "p1", wallet: "W", secretMac: "m" },
      }],
    }]);
    kv.close();
    const env = { WELL_KNOWN_NAMES: "Foo,Bar" };

    const keys = await admin(env, "--kv", path, "keys");
    assertEquals(keys.code, 0, keys.stderr);
    assertEquals(keys.json().items.map((k: { keyId: string }) => k.keyId), ["ab12"]);
    assert(!keys.stdout.includes('"m"') && !/mac/i.test(keys.stdout));

    const ban = await admin(env, "--kv", path, "ban", "ab12", "--reason", "scam");
    assertEquals(ban.code, 0, ban.stderr);
    assertEquals(ban.json().key.status, "banned");
    assertEquals((await admin(env, "--kv", path, "lift", "ab12")).json().key.status, "active");

    const missing = await admin(env, "--kv", path, "ban", "ffff", "--reason", "x");
    assertEquals(missing.code, 1);
    assertEquals(missing.lastErr().error.code, "not_found");

    assertEquals((await admin(env, "--kv", path, "names")).json().names, ["Foo", "Bar"]);
    assertEquals((await admin(env, "--kv", path, "names", "add", "Baz")).json().names, [
      "Foo",
      "Bar",
      "Baz",
    ]);
    assertEquals((await admin(env, "--kv", path, "names", "reset")).json().source, "config");

    const usage = await admin(env, "--kv", path, "ban", "ab12");
    assertEquals(usage.code, 2);
    assertMatch(usage.stderr, /ban needs --reason/);
    assertEquals((await admin(env, "--kv", path, "frobnicate")).code, 2);
    assertEquals((await admin(env, "--kv", `${dir}/none.sqlite3`, "keys")).code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task admin --url goes through /admin with ADMIN_TOKEN", async () => {
  const h = await startHarness({ env: { ADMIN_TOKEN: TOKEN } });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, h.app.fetch);
  try {
    await h.services.store.append([{
      stream: "purchase-p1",
      expectedVersion: 0,
      events: [{
        type: "KeyIssued",
        v: 1,
        data: { keyId: "cd34cd34cd34cd34", purchaseId: "p1", wallet: "W", secretMac: "m" },
      }],
    }]);
    const url = `http://127.0.0.1:${server.addr.port}`;
    const ban = await admin(
      { ADMIN_TOKEN: TOKEN },
      "--url",
      url,
      "ban",
      "cd34cd34cd34cd34",
      "--reason",
      "rug pull",
    );
    assertEquals(ban.code, 0, ban.stderr);
    assertEquals(ban.json().key.banned, "rug pull");
    const banned = await admin({ ADMIN_TOKEN: TOKEN }, "--url", url, "keys", "--status", "banned");
    assertEquals(banned.json().items.length, 1);
    const wrong = await admin({ ADMIN_TOKEN: TOKEN + "x" }, "--url", url, "keys");
    assertEquals(wrong.code, 1);
    assertEquals(wrong.lastErr().error.code, "unauthorized");
    assertEquals((await admin({}, "--url", url, "keys")).code, 2);
  } finally {
    await server.shutdown();
    await h.close();
  }
});
