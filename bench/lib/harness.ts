/**
 * The service for the benchmark: the real app (`bootstrap`, in-memory KV, the real portal flow
 * for keys) pointed through SOLANA_RPC_URL at the embedded chain running in its own process
 * (`startChainProcess`), as an RPC node is in a deployment. Same shape as
 * tests/support/harness.ts, except that chain control goes through the chain's /admin/ routes,
 * so funding a wallet is async.
 */
import { Keypair, LAMPORTS_PER_SOL, Transaction } from "@solana/web3.js";
import bs58 from "bs58";
import { type Booted, bootstrap } from "../../src/bootstrap.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/http/logger.ts";
import { signWithKeypair } from "../../src/portal/sign-with-keypair.ts";
import { type ChainProcess, startChainProcess } from "./chain-process.ts";

export interface BenchHarness extends Booted {
  chainProcess: ChainProcess;
  kv: Deno.Kv;
  logs: string[];
  base: string;
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  fundedWallet(sol?: number): Promise<Keypair>;
  newApiKey(
    wallet?: Keypair,
  ): Promise<
    { apiKey: string; keyId: string; wallet: Keypair; cookie: string; purchaseId: string }
  >;
  waitForConfirmation(signature: string): Promise<void>;
}

export async function startBenchHarness(opts: {
  env?: Record<string, string>;
  rpcFetch?: typeof fetch;
  slotMs?: number;
}): Promise<BenchHarness> {
  const chain = await startChainProcess({ slotMs: opts.slotMs ?? 40 });
  try {
    return await boot(chain, opts);
  } catch (e) {
    await chain.close();
    throw e;
  }
}

async function boot(
  chain: ChainProcess,
  opts: { env?: Record<string, string>; rpcFetch?: typeof fetch },
): Promise<BenchHarness> {
  const kv = await Deno.openKv(":memory:");
  const treasury = Keypair.generate();
  const config: Config = loadConfig({
    SOLANA_RPC_URL: chain.url,
    KEY_PEPPER: "bench-pepper-0123456789abcdef0123456789",
    TREASURY_ADDRESS: treasury.publicKey.toBase58(),
    PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
    LOG_LEVEL: "info",
    ...opts.env,
  });
  const logger = memoryLogger();
  const booted = await bootstrap(config, { kv, logger, rpcFetch: opts.rpcFetch });
  const base = config.publicBaseUrl;

  const request = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) headers.set("content-type", "application/json");
    return Promise.resolve(booted.app.request(base + path, {
      ...rest,
      headers,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    }));
  };
  const portal = (cookie: string, path: string, json?: unknown) =>
    request(path, { method: json === undefined ? "GET" : "POST", headers: { cookie }, json });

  const signIn = async (wallet: Keypair) => {
    const ch = await (await request("/portal/api/challenge", {
      method: "POST",
      json: { wallet: wallet.publicKey.toBase58() },
    })).json();
    const sig = await signWithKeypair(wallet, new TextEncoder().encode(ch.message));
    const res = await request("/portal/api/session", {
      method: "POST",
      json: { wallet: wallet.publicKey.toBase58(), nonce: ch.nonce, signature: bs58.encode(sig) },
    });
    if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
    return res.headers.get("set-cookie")!.split(";")[0];
  };

  const h: BenchHarness = {
    ...booted,
    chainProcess: chain,
    kv,
    logs: logger.lines,
    base,
    request,
    async fundedWallet(sol = 10) {
      const w = Keypair.generate();
      await chain.airdrop(w.publicKey.toBase58(), BigInt(sol * LAMPORTS_PER_SOL));
      return w;
    },
    async newApiKey(wallet) {
      wallet ??= await h.fundedWallet();
      const cookie = await signIn(wallet);
      const quote = await (await portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
        .json();
      const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
      tx.partialSign(wallet);
      const signature = await booted.services.connection.sendRawTransaction(tx.serialize());
      await h.waitForConfirmation(signature);
      const check =
        await (await portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
      if (check.status !== "paid") throw new Error(`payment not seen: ${JSON.stringify(check)}`);
      const res = await portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
      if (res.status !== 201) {
        throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
      }
      const { apiKey, keyId } = await res.json();
      return { apiKey, keyId, wallet, cookie, purchaseId: quote.purchaseId };
    },
    async waitForConfirmation(signature) {
      for (let i = 0; i < 500; i++) {
        const st = await booted.services.connection.getSignatureStatuses([signature]);
        const s = st.value[0];
        if (s?.err) throw new Error(`transaction failed: ${JSON.stringify(s.err)}`);
        if (s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized") return;
        if (chain.slotMs === "manual") await chain.advanceSlots(1);
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`transaction ${signature} not confirmed in time`);
    },
    async close() {
      await booted.close();
      kv.close();
      await chain.close();
    },
  };
  return h;
}
