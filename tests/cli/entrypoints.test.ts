/**
 * The two long-running entry points as the README starts them: `src/main.ts` on the embedded
 * defaults (local KV file, generated treasury and pepper, the embedded chain in-process) and
 * `deno task chain` alone. Each prints a ready line, answers, and stops cleanly on SIGTERM.
 */
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { bootstrap } from "../../src/bootstrap.ts";
import { loadConfig } from "../../src/config.ts";
import { signWithKeypair } from "../../src/portal/sign-with-keypair.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

interface Running {
  url: string;
  /**
   * SIGTERM twice, 5 ms apart, as a process-group kill delivers it to a process and to the one
   * that started it; `once` for `deno task` itself, which such a kill signals only once (a second
   * SIGTERM to `deno task` while its child exits now and then ends it with 143, a race in Deno's
   * task runner, not in our code).
   */
  stop(opts?: { once?: boolean }): Promise<{ code: number; stderr: string }>;
}

async function launch(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<Running> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  (async () => {
    for await (const t of child.stderr.pipeThrough(new TextDecoderStream())) stderr += t;
  })();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
    const m = ready.exec(out);
    if (m) {
      (async () => {
        while (!(await reader.read().catch(() => ({ done: true }))).done) { /* drain */ }
      })();
      return {
        url: m[1],
        async stop({ once = false } = {}) {
          child.kill("SIGTERM");
          if (!once) {
            await new Promise((r) => setTimeout(r, 5));
            try {
              child.kill("SIGTERM");
            } catch { /* already gone: the first signal finished the job */ }
          }
          const status = await child.status;
          return { code: status.code, stderr };
        },
      };
    }
  }
  child.kill("SIGKILL");
  await child.status;
  throw new Error(`no ready line; stdout: ${out}\nstderr: ${stderr}`);
}

const SERVICE = ["run", "-A", "--unstable-kv", "--unstable-cron", "src/main.ts"];

/** The treasury a buyer is asked to pay, read through the portal like the page does. */
async function quotedTreasury(base: string): Promise<string> {
  const wallet = Keypair.generate();
  const post = (path: string, body: unknown, cookie = "") =>
    fetch(base + path, {
      method: "POST",
      // No Origin: with PORT=0 the portal's own origin (PUBLIC_BASE_URL's default) names port 0.
      headers: { "content-type": "application/json", ...(cookie && { cookie }) },
      body: JSON.stringify(body),
    });
  const challenge = await (await post("/portal/api/challenge", {
    wallet: wallet.publicKey.toBase58(),
  })).json();
  const signature = await signWithKeypair(wallet, new TextEncoder().encode(challenge.message));
  const session = await post("/portal/api/session", {
    wallet: wallet.publicKey.toBase58(),
    nonce: challenge.nonce,
    signature: bs58.encode(signature),
  });
  await session.body?.cancel();
  const cookie = session.headers.get("set-cookie")!.split(";")[0];
  const quote = await post("/portal/api/purchases", { currency: "SOL" }, cookie);
  assertEquals(quote.status, 201);
  return (await quote.json()).treasury;
}

Deno.test("src/main.ts on the embedded defaults: generated local secrets, KV file, chain, clean stop; a restart keeps the treasury", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-start-" });
  const env = { DATA_DIR: dataDir, PORT: "0", CHAIN_PORT: "0", LOG_LEVEL: "warn" };
  const ready = /service ready on (http:\/\/[\d.]+:\d+) \(embedded chain http:\/\/[\d.]+:\d+\)/;
  try {
    const first = await launch(SERVICE, env, ready);
    const pricing = await fetch(`${first.url}/v1/pricing`);
    assertEquals(pricing.status, 200);
    await pricing.body?.cancel();
    const treasury = await quotedTreasury(first.url);
    const firstStop = await first.stop();
    assertEquals(firstStop.code, 0);
    assert(!/BadResource|Uncaught|Exception/.test(firstStop.stderr), firstStop.stderr);

    const files = [];
    for await (const e of Deno.readDir(dataDir)) files.push(e.name);
    for (const f of ["kv.sqlite3", "treasury.json", "key-pepper"]) assert(files.includes(f), f);
    for (const f of ["treasury.json", "key-pepper"]) {
      assertEquals((await Deno.stat(`${dataDir}/${f}`)).mode! & 0o777, 0o600, f);
    }
    const saved = JSON.parse(await Deno.readTextFile(`${dataDir}/treasury.json`));
    assertEquals(Keypair.fromSecretKey(Uint8Array.from(saved)).publicKey.toBase58(), treasury);

    const second = await launch(SERVICE, env, ready);
    assertEquals(await quotedTreasury(second.url), treasury);
    const stopped = await second.stop();
    assertEquals(stopped.code, 0);
    assert(!/BadResource|Uncaught|Exception/.test(stopped.stderr), stopped.stderr);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

const CHAIN_READY = /embedded chain ready at (http:\/\/[\d.]+:\d+)/;

async function chainAnswers(url: string) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getHealth" }),
  });
  assertEquals(await res.json(), { jsonrpc: "2.0", id: 1, result: "ok" });
}

Deno.test("deno task chain: the embedded chain alone answers JSON-RPC and stops cleanly", async () => {
  const chain = await launch(["task", "-q", "chain"], { CHAIN_PORT: "0" }, CHAIN_READY);
  try {
    await chainAnswers(chain.url);
  } finally {
    assertEquals((await chain.stop({ once: true })).code, 0);
  }
});

Deno.test("the chain's entry point, run directly, exits 0 after two SIGTERMs 5 ms apart", async () => {
  const chain = await launch(["run", "-A", "src/chain/main.ts"], { CHAIN_PORT: "0" }, CHAIN_READY);
  try {
    await chainAnswers(chain.url);
  } finally {
    assertEquals((await chain.stop()).code, 0);
  }
});

Deno.test("bootstrap: close() twice at once closes the KV and the chain once", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-close-" });
  try {
    const booted = await bootstrap(
      loadConfig({ DATA_DIR: dataDir, CHAIN_PORT: "0", LOG_LEVEL: "silent" }),
    );
    // Count the real closes underneath: each must happen exactly once however often close() is called.
    const kv = booted.services.kv;
    const chain = booted.chain;
    assert(chain, "the embedded chain runs in-process");
    const closes = { kv: 0, chain: 0 };
    const kvClose = kv.close.bind(kv);
    kv.close = () => {
      closes.kv++;
      kvClose();
    };
    const chainClose = chain.close.bind(chain);
    chain.close = () => {
      closes.chain++;
      return chainClose();
    };
    await Promise.all([booted.close(), booted.close()]);
    await booted.close();
    assertEquals(closes, { kv: 1, chain: 1 });
    // And they are closed: the KV refuses work, the chain no longer answers.
    await assertRejects(() => kv.get(["anything"]));
    await assertRejects(() =>
      fetch(chain.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getHealth" }),
      })
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
