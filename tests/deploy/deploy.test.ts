/**
 * The entry point in deploy mode, run the way Deno Deploy runs it: `src/main.ts` in a fresh
 * process, configuration only from the environment, no FFI or subprocesses, and write access to
 * nothing but the directory `Deno.openKv()` (no path) keeps its database in. The working directory
 * is an empty temp dir that must still be empty afterwards.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { startChain } from "../../src/chain/mod.ts";
import { toHex } from "../../src/kernel/hashing.ts";
import { Keypair } from "@solana/web3.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Where `Deno.openKv()` with no path puts the database for a given --location. */
async function defaultKvDir(location: string): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  })
    .output();
  const { originStorage } = JSON.parse(new TextDecoder().decode(info.stdout));
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(new URL(location).origin),
  );
  return `${originStorage}/${toHex(new Uint8Array(digest))}`;
}

async function listDir(path: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(path)) out.push(e.name);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return out.sort();
}

/** Reads the child's stdout until the ready line, keeping everything for error messages. */
async function waitForReady(child: Deno.ChildProcess, seen: string[]): Promise<string> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const deadline = Date.now() + 60_000;
  let buf = "";
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    seen.push(value);
    const m = /ready on (http:\/\/[\d.]+:\d+)/.exec(buf);
    if (m) {
      // Keep draining so the child never blocks on a full pipe.
      (async () => {
        for (;;) {
          const r = await reader.read().catch(() => ({ done: true, value: "" }));
          if (r.done) return;
          seen.push(r.value);
        }
      })();
      return m[1];
    }
  }
  throw new Error("the service never printed its ready line");
}

Deno.test("deploy mode: src/main.ts starts with Deploy's permissions, serves from Deno.openKv() and writes no local files", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "tcb-deploy-cwd-" });
  const location = `https://deploy-test-${crypto.randomUUID().slice(0, 8)}.invalid/`;
  const kvDir = await defaultKvDir(location);
  const chain = await startChain({ port: 0, slotMs: 50, quiet: true });
  const stdout: string[] = [];
  let stderr = "";
  let child: Deno.ChildProcess | null = null;
  try {
    child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--config",
        `${ROOT}deno.json`,
        "--unstable-kv",
        "--unstable-cron",
        `--location=${location}`,
        "--allow-net",
        "--allow-env",
        "--allow-read",
        // Deploy has no local disk to write to: only the KV's own directory is writable here.
        `--allow-write=${kvDir}`,
        "--deny-ffi",
        "--deny-run",
        `${ROOT}src/main.ts`,
      ],
      cwd,
      clearEnv: true,
      env: {
        // Not Deploy's, but where this machine's Deno keeps its caches and origin storage: the
        // default KV's directory above was looked up under it (a fresh CI clone sets DENO_DIR).
        ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
        DEPLOY_MODE: "1",
        PORT: "0",
        HOSTNAME: "127.0.0.1",
        SOLANA_RPC_URL: chain.url,
        TREASURY_ADDRESS: Keypair.generate().publicKey.toBase58(),
        KEY_PEPPER: "deploy-pepper-0123456789abcdef0123456789",
        PUBLIC_BASE_URL: "https://tokens.example.test",
        PRICE_SOL_USD: "150",
        LOG_LEVEL: "warn",
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const errText = child.stderr.pipeThrough(new TextDecoderStream());
    (async () => {
      for await (const t of errText) stderr += t;
    })();

    let base: string;
    try {
      base = await waitForReady(child, stdout);
    } catch (e) {
      await child.status;
      const why = /Cannot find native binding|Requires ffi access/.test(stderr)
        ? "\nThe deploy-mode process loaded a native addon (litesvm, the embedded chain). Deno Deploy " +
          "has no FFI: src/bootstrap.ts must import ./chain/mod.ts lazily, only when " +
          "SOLANA_RPC_URL is unset."
        : "";
      throw new Error(`${(e as Error).message}${why}\n--- stderr ---\n${stderr.slice(-3000)}`);
    }

    const pricing = await fetch(`${base}/v1/pricing`);
    assertEquals(pricing.status, 200);
    assertEquals((await pricing.json()).token.lamports, "19933334");
    // A KV write through the real app: a portal sign-in challenge.
    const challenge = await fetch(`${base}/portal/api/challenge`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://tokens.example.test" },
      body: JSON.stringify({ wallet: Keypair.generate().publicKey.toBase58() }),
    });
    assertEquals(challenge.status, 200, await challenge.clone().text());
    assertMatch((await challenge.json()).message, /tokens\.example\.test wants you to sign in/);
    const doc = await (await fetch(`${base}/v1/openapi.json`)).json();
    assertEquals(doc.servers, [{ url: "https://tokens.example.test" }]);

    assertEquals(await listDir(cwd), [], "nothing written to the working directory");
    assert(
      (await listDir(kvDir)).includes("kv.sqlite3"),
      "the KV is Deno.openKv()'s default database",
    );
    assert(!/PermissionDenied|NotCapable/.test(stderr), stderr);

    child.kill("SIGTERM");
    const status = await child.status;
    child = null;
    assertEquals(status.code, 0, `graceful shutdown\n${stderr.slice(-2000)}`);
    assertEquals(await listDir(cwd), []);
  } finally {
    if (child) {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    }
    await chain.close();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
    await Deno.remove(kvDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("deploy mode refuses to start without its secrets and names each one", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "tcb-deploy-cfg-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--config",
        `${ROOT}deno.json`,
        "--unstable-kv",
        "--unstable-cron",
        "-A",
        `${ROOT}src/main.ts`,
      ],
      cwd,
      clearEnv: true,
      env: { DEPLOY_MODE: "1", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 2, err);
    for (const v of ["TREASURY_ADDRESS", "KEY_PEPPER", "SOLANA_RPC_URL", "PUBLIC_BASE_URL"]) {
      assertMatch(err, new RegExp(`${v}: required in deploy mode`));
    }
    assertEquals(await listDir(cwd), [], "no DATA_DIR, no generated secrets");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("Deno.cron is registered at the entry point's top level, before anything is awaited (Deploy's rule)", async () => {
  const src = await Deno.readTextFile(`${ROOT}src/main.ts`);
  const lines = src.split("\n");
  const cron = lines.findIndex((l) => l.startsWith("Deno.cron("));
  const firstAwait = lines.findIndex((l) => /\bawait\b/.test(l) && !l.startsWith(" "));
  assert(cron >= 0, "Deno.cron( at column 0 in src/main.ts");
  assert(
    firstAwait < 0 || cron < firstAwait,
    `cron on line ${cron + 1}, first await ${firstAwait + 1}`,
  );
  // And nowhere else, where Deploy would not find it.
  for await (const f of Deno.readDir(`${ROOT}src`)) {
    if (f.isFile && f.name.endsWith(".ts") && f.name !== "main.ts") {
      assert(!(await Deno.readTextFile(`${ROOT}src/${f.name}`)).includes("Deno.cron("), f.name);
    }
  }
});
