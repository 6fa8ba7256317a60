/**
 * The whole flow on an embedded chain that enforces the public endpoints' limits
 * (CHAIN_RPC_LIMITS=public: 100 requests per 10 s per client, 40 per method), with the service
 * on the public budget and its watcher running: `deno task dev:key`, hosted metadata, 20 builds
 * (half relayed, half sent by the caller through its own connection from another address),
 * confirmations and verifications. Every creation ends `confirmed`, no answer is a 5xx, and the
 * chain never had to refuse the service: its budget kept it under the limits.
 *
 * Slow by nature (the budget slows the watcher); bounds are generous and nothing depends on how
 * fast the machine is: a slower machine only spreads the same calls over more time.
 */
import { Connection, Keypair, Transaction } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng, toBase64 } from "../metadata/image/fixtures.ts";
import { boundedRpcFetch } from "../../src/solana/rpc-fetch.ts";
import { PUBLIC_RPC_LIMITS, RpcBudget } from "../../src/solana/rpc-budget.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BUILDS = 20;
/** Generous: the watcher waits for room in the budget. */
const CONFIRM_WITHIN_MS = 240_000;

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("public limits: dev key, metadata, 20 builds relayed and self-sent, all confirmed and verified, no 5xx, no 429 to the service", async () => {
  const toChain: { method: string; status: number }[] = [];
  const h = await startHarness({
    // Mainnet-like slots: a blockhash lives about a minute, as there.
    chain: { rpcLimits: "public", slotMs: 400 },
    env: {
      // What a public endpoint's URL gives by default; the test chain's URL is a custom one.
      RPC_BUDGET_PER_10S: "100",
      RPC_BUDGET_PER_METHOD_PER_10S: "40",
      REQUESTS_PER_HOUR: "5000",
      LOG_LEVEL: "info",
    },
    watch: true,
    rpcFetch: async (input, init) => {
      const msg = JSON.parse(String(init?.body));
      const res = await fetch(input, init);
      for (const c of Array.isArray(msg) ? msg : [msg]) {
        toChain.push({ method: c.method, status: res.status });
      }
      return res;
    },
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, h.app.fetch);
  const service = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  // The caller is another client of the chain (its own address), on its own public budget.
  const callerClient = Deno.createHttpClient({ localAddress: "127.0.0.2" });
  const caller = new Connection(h.chain.url, {
    commitment: "confirmed",
    disableRetryOnRateLimit: true,
    fetch: boundedRpcFetch({
      timeoutMs: 10_000,
      retries: 2,
      budget: new RpcBudget(PUBLIC_RPC_LIMITS, { userWaitMs: 15_000 }),
      base: (input, init) => fetch(input, { ...init, client: callerClient }),
    }),
  });
  const dataDir = await Deno.makeTempDir({ prefix: "tcb-public-limits-" });
  const answers: { what: string; status: number; body: unknown }[] = [];
  try {
    // 1. A dev key, as a developer gets one.
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "dev:key"],
      cwd: ROOT,
      env: { NO_COLOR: "1", SERVICE_URL: service, SOLANA_RPC_URL: h.chain.url, DATA_DIR: dataDir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    const printed = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    const payer = Keypair.fromSecretKey(
      Uint8Array.from(JSON.parse(await Deno.readTextFile(printed.keypairPath))),
    );
    // Enough SOL for 20 creations (the faucet, not an RPC call).
    h.chain.airdrop(payer.publicKey.toBase58(), 20_000_000_000n);

    const api = async (what: string, path: string, json?: unknown) => {
      const res = await fetch(service + path, {
        method: json === undefined ? "GET" : "POST",
        headers: { ...bearer(printed.apiKey), "content-type": "application/json" },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      const body = await res.json();
      answers.push({ what, status: res.status, body });
      return { status: res.status, body };
    };

    // 2. Hosted metadata.
    const meta = await api("metadata", "/v1/metadata", {
      name: "Limited",
      symbol: "LIM",
      imageBase64: toBase64(makePng(8, 8)),
    });
    assertEquals(meta.status, 201, JSON.stringify(meta.body));

    // 3. 20 builds, a second apart, as people arrive. Each is signed and sent LAG builds later
    // (even ones through the relay, odd ones by the caller's own connection), so several builds
    // are open at once and the watcher has real work under the limits.
    const LAG = 8;
    const built: { mint: string; wire: Uint8Array }[] = [];
    const sent: { mint: string; signature: string; via: string }[] = [];
    const send = async (i: number) => {
      const { mint, wire } = built[i];
      if (i % 2 === 0) {
        const relayed = await api(`relay ${i}`, "/v1/transactions", { transaction: b64(wire) });
        assertEquals(relayed.status, 202, JSON.stringify(relayed.body));
        sent.push({ mint, signature: relayed.body.signature, via: "relay" });
      } else {
        const signature = await caller.sendRawTransaction(wire, {
          preflightCommitment: "confirmed",
        });
        sent.push({ mint, signature, via: "own" });
      }
    };
    for (let i = 0; i < BUILDS + LAG; i++) {
      if (i < BUILDS) {
        const b = await api(`build ${i}`, "/v1/tokens", {
          payer: payer.publicKey.toBase58(),
          name: "Limited",
          symbol: "LIM",
          metadataUri: meta.body.metadataUri,
          supply: "1000000",
          decimals: 6,
        });
        assertEquals(b.status, 201, JSON.stringify(b.body));
        const tx = Transaction.from(
          Uint8Array.from(atob(b.body.transaction), (c) => c.charCodeAt(0)),
        );
        tx.sign(payer);
        built.push({ mint: b.body.mint, wire: tx.serialize() });
      }
      if (i >= LAG) await send(i - LAG);
      await sleep(1_000);
    }

    // 4. The caller confirms its own sends on its own connection.
    for (const s of sent.filter((s) => s.via === "own")) {
      const until = Date.now() + CONFIRM_WITHIN_MS;
      for (;;) {
        const { value } = await caller.getSignatureStatuses([s.signature]);
        const st = value[0];
        assertEquals(st?.err ?? null, null, `${s.signature} failed`);
        if (st?.confirmationStatus === "confirmed" || st?.confirmationStatus === "finalized") break;
        assert(Date.now() < until, `${s.signature} not confirmed`);
        await sleep(500);
      }
    }

    // 5. The service learns every outcome (the watcher, at background priority): records poll
    // from KV, no RPC.
    const until = Date.now() + CONFIRM_WITHIN_MS;
    for (;;) {
      const records = await Promise.all(
        sent.map((s) => api(`record ${s.mint}`, `/v1/tokens/${s.mint}`)),
      );
      const open = records.filter((r) => r.body.status !== "confirmed");
      if (open.length === 0) break;
      assert(
        open.every((r) => r.body.status === "built" || r.body.status === "submitted"),
        `a creation ended otherwise: ${JSON.stringify(open.map((r) => r.body.status))}`,
      );
      assert(Date.now() < until, `${open.length} creations not confirmed in time`);
      await sleep(2_000);
    }

    // 6. Verification of every creation.
    for (const s of sent) {
      const v = await api(`verify ${s.signature}`, `/v1/transactions/${s.signature}`);
      assertEquals(v.status, 200, JSON.stringify(v.body));
      assertEquals(v.body.status, "confirmed", `${s.via} ${s.signature}`);
      assertEquals(v.body.mint, s.mint);
    }

    const fiveXx = answers.filter((a) => a.status >= 500);
    assertEquals(fiveXx, [], "5xx answers");
    const refused = toChain.filter((c) => c.status === 429);
    assertEquals(refused, [], "the chain refused the service: its budget let too much through");
    const byMethod: Record<string, number> = {};
    for (const c of toChain) byMethod[c.method] = (byMethod[c.method] ?? 0) + 1;
    console.log(`public limits: ${toChain.length} service RPC calls ${JSON.stringify(byMethod)}`);
  } finally {
    callerClient.close();
    await server.shutdown();
    await h.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
